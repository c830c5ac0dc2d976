import { injectable } from 'inversify';
import { AnalysisContext, Analyzer } from '../analyzer';
import { asArray, asRecord, field } from '../objects';

function verifiesNothing(tls: unknown): string | undefined {
  const t = asRecord(tls);
  const mode = t.mode;
  if (mode !== 'SIMPLE' && mode !== 'MUTUAL') return undefined;
  if (t.insecureSkipVerify === true) return undefined;
  return !t.caCertificates && !t.credentialName ? mode : undefined;
}

/**
 * destinationrule.CaCertificateAnalyzer: TLS toward a destination (SIMPLE or MUTUAL) with
 * neither caCertificates nor credentialName cannot verify the server's identity.
 */
@injectable()
export class CaCertificateAnalyzer implements Analyzer {
  readonly metadata = {
    name: 'destinationrule.CaCertificateAnalyzer',
    description: 'Checks if caCertificates is set when TLS mode is SIMPLE/MUTUAL',
    inputs: ['DestinationRule'],
  };

  analyze(ctx: AnalysisContext): void {
    for (const dr of ctx.objects.of('DestinationRule')) {
      const host = String(field(dr.raw, 'spec', 'host') ?? '');
      const policy = field(dr.raw, 'spec', 'trafficPolicy');
      const mode = verifiesNothing(field(policy, 'tls'));
      if (mode) ctx.report('NoServerCertificateVerificationDestinationLevel', dr, [dr.name, dr.namespace, mode, host], 'spec.trafficPolicy.tls.mode');
      asArray(field(policy, 'portLevelSettings')).forEach((p, i) => {
        const portMode = verifiesNothing(field(p, 'tls'));
        if (portMode) {
          const port = asRecord(field(p, 'port'));
          ctx.report('NoServerCertificateVerificationPortLevel', dr, [dr.name, dr.namespace, portMode, host, `number:${port.number ?? 0}`], `spec.trafficPolicy.portLevelSettings[${i}].tls.mode`);
        }
      });
    }
  }
}
