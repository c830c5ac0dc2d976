import { injectable } from 'inversify';
import { AnalysisContext, Analyzer } from '../analyzer';
import { asArray, field } from '../objects';
import { effectiveNamespace, hostsOverlap } from './common';

const DOMAIN_SUFFIX = 'cluster.local';

function qualify(host: string, namespace: string): string {
  return host.includes('.') || host.includes('*') ? host : `${host}.${namespace}.svc.${DOMAIN_SUFFIX}`;
}

/** Every destination a VirtualService routes or mirrors to, with the field path naming it. */
function destinations(spec: unknown): Array<{ destination: unknown; path: string }> {
  const out: Array<{ destination: unknown; path: string }> = [];
  for (const section of ['http', 'tcp', 'tls']) {
    asArray(field(spec, section)).forEach((rule, i) => {
      asArray(field(rule, 'route')).forEach((r, j) => out.push({ destination: field(r, 'destination'), path: `spec.${section}[${i}].route[${j}].destination` }));
      if (field(rule, 'mirror') !== undefined) out.push({ destination: field(rule, 'mirror'), path: `spec.${section}[${i}].mirror` });
      asArray(field(rule, 'mirrors')).forEach((m, j) => out.push({ destination: field(m, 'destination'), path: `spec.${section}[${i}].mirrors[${j}].destination` }));
    });
  }
  return out;
}

/** virtualservice.DestinationRuleAnalyzer: a routed-to subset must be defined by a DestinationRule of that host. */
@injectable()
export class VirtualServiceDestinationRuleAnalyzer implements Analyzer {
  readonly metadata = {
    name: 'virtualservice.DestinationRuleAnalyzer',
    description: 'Checks the destination rules associated with each virtual service',
    inputs: ['VirtualService', 'DestinationRule'],
  };

  analyze(ctx: AnalysisContext): void {
    const rules = ctx.objects.of('DestinationRule').map((dr) => ({
      host: qualify(String(field(dr.raw, 'spec', 'host') ?? ''), effectiveNamespace(dr)),
      subsets: new Set(asArray(field(dr.raw, 'spec', 'subsets')).map((s) => field(s, 'name'))),
    }));
    for (const vs of ctx.objects.of('VirtualService')) {
      for (const { destination, path } of destinations(field(vs.raw, 'spec'))) {
        const host = field(destination, 'host');
        const subset = field(destination, 'subset');
        if (typeof host !== 'string' || typeof subset !== 'string' || subset === '') continue;
        const qualified = qualify(host, effectiveNamespace(vs));
        if (!rules.some((r) => hostsOverlap(r.host, qualified) && r.subsets.has(subset))) {
          ctx.report('ReferencedResourceNotFound', vs, ['host+subset in destinationrule', `${host}+${subset}`], path);
        }
      }
    }
  }
}
