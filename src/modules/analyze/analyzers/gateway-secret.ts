import { injectable } from 'inversify';
import { AnalysisContext, Analyzer } from '../analyzer';
import { asArray, field } from '../objects';
import { labelMap, labelsMatch, selectorString } from './common';

/**
 * gateway.SecretAnalyzer: a Gateway server's TLS credentialName must name a Secret in the
 * namespace of the gateway workload (the pods its selector picks) — where the proxy reads it.
 */
@injectable()
export class GatewaySecretAnalyzer implements Analyzer {
  readonly metadata = {
    name: 'gateway.SecretAnalyzer',
    description: 'Checks a gateway\'s referenced secrets for correctness',
    inputs: ['Gateway', 'Pod', 'Secret'],
  };

  analyze(ctx: AnalysisContext): void {
    const pods = ctx.objects.of('Pod');
    for (const gw of ctx.objects.of('Gateway')) {
      const selector = labelMap(field(gw.raw, 'spec', 'selector'));
      const workload = pods.find((p) => labelsMatch(selector, p.labels));
      if (!workload) {
        ctx.report('ReferencedResourceNotFound', gw, ['selector', selectorString(selector)], 'spec.selector');
        continue;
      }
      asArray(field(gw.raw, 'spec', 'servers')).forEach((server, i) => {
        const name = field(server, 'tls', 'credentialName');
        if (typeof name !== 'string' || name === '') return;
        const slash = name.indexOf('/');
        const [ns, secret] = slash >= 0 ? [name.slice(0, slash), name.slice(slash + 1)] : [workload.namespace, name];
        if (!ctx.objects.get('Secret', ns, secret)) ctx.report('ReferencedResourceNotFound', gw, ['credentialName', name], `spec.servers[${i}].tls.credentialName`);
      });
    }
  }
}
