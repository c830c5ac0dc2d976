import { injectable } from 'inversify';
import { AnalysisContext, Analyzer } from '../analyzer';
import { asArray, asRecord, field } from '../objects';

/** Protocols a port name prefix (`http-web`) or appProtocol can declare. */
const PROTOCOLS = new Set(['tcp', 'udp', 'sctp', 'grpc', 'grpc-web', 'http', 'http_proxy', 'http2', 'https', 'tls', 'mongo', 'redis', 'mysql']);
const APP_PROTOCOLS = new Set([...PROTOCOLS, 'hbone', 'kubernetes.io/h2c', 'kubernetes.io/ws', 'kubernetes.io/wss']);

/** Whether the mesh can tell a port's protocol without sniffing: appProtocol, a UDP/SCTP port, or a `<protocol>[-suffix]` name. */
export function protocolDeclared(port: Record<string, unknown>): boolean {
  if (typeof port.appProtocol === 'string' && APP_PROTOCOLS.has(port.appProtocol.toLowerCase())) return true;
  if (port.protocol === 'UDP' || port.protocol === 'SCTP') return true;
  const name = typeof port.name === 'string' ? port.name.toLowerCase() : '';
  if (PROTOCOLS.has(name)) return true;
  const dash = name.indexOf('-');
  return dash > 0 && PROTOCOLS.has(name.slice(0, dash));
}

/**
 * service.PortNameAnalyzer: a Service port whose name (or appProtocol) does not declare its
 * protocol leaves the mesh to detect it. The control plane's own Services, ExternalName
 * Services and Services a gateway controller manages are not the user's to rename.
 */
@injectable()
export class PortNameAnalyzer implements Analyzer {
  readonly metadata = {
    name: 'service.PortNameAnalyzer',
    description: 'Checks the port names associated with each service',
    inputs: ['Service'],
  };

  analyze(ctx: AnalysisContext): void {
    for (const svc of ctx.objects.of('Service')) {
      if (svc.namespace === ctx.systemNamespace && ['pilot', 'meshd'].includes(svc.labels.mesh ?? '')) continue;
      if (field(svc.raw, 'spec', 'type') === 'ExternalName') continue;
      if (svc.labels['gateway.networking.k8s.io/gateway-name'] !== undefined) continue;
      asArray(field(svc.raw, 'spec', 'ports')).forEach((p, i) => {
        const port = asRecord(p);
        if (protocolDeclared(port)) return;
        ctx.report('PortNameIsNotUnderNamingConvention', svc, [port.name ?? '', Number(port.port ?? 0), String(port.targetPort ?? 0)], `spec.ports[${i}]`);
      });
    }
  }
}
