import { injectable } from 'inversify';
import { AnalysisContext, Analyzer } from '../analyzer';
import { asArray, asRecord, field } from '../objects';
import { fullName, labelMap, labelsMatch } from './common';

/** Two servers' TLS settings name the same certificate (credentialName, or the same file pair). */
function sameCertificate(a: unknown, b: unknown): boolean {
  const x = asRecord(a);
  const y = asRecord(b);
  if (typeof x.credentialName === 'string' && x.credentialName !== '') return x.credentialName === y.credentialName;
  return typeof x.serverCertificate === 'string' && x.serverCertificate !== '' && x.serverCertificate === y.serverCertificate && x.privateKey === y.privateKey;
}

/**
 * gateway.CertificateAnalyzer: a Gateway whose workloads also run another Gateway (its selector
 * covers the other's) with a server using the same certificate: clients reusing an HTTP/2
 * connection across the hosts get 404s.
 */
@injectable()
export class GatewayCertificateAnalyzer implements Analyzer {
  readonly metadata = {
    name: 'gateway.CertificateAnalyzer',
    description: 'Checks a gateway certificate',
    inputs: ['Gateway'],
  };

  analyze(ctx: AnalysisContext): void {
    const gateways = ctx.objects.of('Gateway');
    for (const gw of gateways) {
      const selector = labelMap(field(gw.raw, 'spec', 'selector'));
      const servers = asArray(field(gw.raw, 'spec', 'servers'));
      for (const other of gateways) {
        if (other === gw || !labelsMatch(selector, labelMap(field(other.raw, 'spec', 'selector')))) continue;
        const otherServers = asArray(field(other.raw, 'spec', 'servers'));
        servers.forEach((s, i) => {
          const tls = field(s, 'tls');
          if (tls === undefined) return;
          for (const o of otherServers) {
            const otherTls = field(o, 'tls');
            if (otherTls !== undefined && sameCertificate(tls, otherTls)) ctx.report('GatewayDuplicateCertificate', gw, [[fullName(gw), fullName(other)]], `spec.servers[${i}].tls`);
          }
        });
      }
    }
  }
}
