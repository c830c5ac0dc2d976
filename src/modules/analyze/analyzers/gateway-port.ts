import { injectable } from 'inversify';
import { AnalysisContext, Analyzer } from '../analyzer';
import { asArray, asRecord, field } from '../objects';
import { labelMap, labelsMatch, selectorString, serviceSelector } from './common';

/**
 * gateway.IngressGatewayPortAnalyzer: a Gateway's selector must pick some pod, and each server
 * port must be a TCP target port of a Service selecting those pods (else the port is unreachable
 * through the Service).
 */
@injectable()
export class IngressGatewayPortAnalyzer implements Analyzer {
  readonly metadata = {
    name: 'gateway.IngressGatewayPortAnalyzer',
    description: 'Checks a gateway\'s ports against the gateway\'s Kubernetes service ports',
    inputs: ['Gateway', 'Pod', 'Service'],
  };

  analyze(ctx: AnalysisContext): void {
    const pods = ctx.objects.of('Pod');
    const services = ctx.objects.of('Service');
    for (const gw of ctx.objects.of('Gateway')) {
      const selector = labelMap(field(gw.raw, 'spec', 'selector'));
      const ports = new Set<number>();
      let selected = 0;
      for (const pod of pods) {
        if (!labelsMatch(selector, pod.labels)) continue;
        selected++;
        for (const svc of services) {
          const s = serviceSelector(svc);
          if (svc.namespace !== pod.namespace || !s || !labelsMatch(s, pod.labels)) continue;
          for (const p of asArray(field(svc.raw, 'spec', 'ports'))) {
            const port = asRecord(p);
            if ((port.protocol ?? 'TCP') !== 'TCP') continue;
            // The gateway listens on the target port the Service forwards to.
            const target = typeof port.targetPort === 'number' ? port.targetPort : Number(port.port);
            ports.add(target);
          }
        }
      }
      if (selected === 0) {
        ctx.report('ReferencedResourceNotFound', gw, ['selector', selectorString(selector)], 'spec.selector');
        continue;
      }
      asArray(field(gw.raw, 'spec', 'servers')).forEach((server, i) => {
        const number = field(server, 'port', 'number');
        if (typeof number === 'number' && !ports.has(number)) ctx.report('GatewayPortNotDefinedOnService', gw, [number, selectorString(selector)], `spec.servers[${i}].port`);
      });
    }
  }
}
