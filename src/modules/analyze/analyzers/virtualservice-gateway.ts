import { injectable } from 'inversify';
import { AnalysisContext, Analyzer } from '../analyzer';
import { AnalysisObject, asArray, field } from '../objects';
import { fullName, hostsOverlap } from './common';

/** A reference `name` or `ns/name` from an object in `namespace`: the [namespace, name] it means. */
export function qualify(ref: string, namespace: string): [string, string] {
  const slash = ref.indexOf('/');
  return slash >= 0 ? [ref.slice(0, slash), ref.slice(slash + 1)] : [namespace, ref];
}

/**
 * The hosts a Gateway offers to routes of `viewerNamespace`: `host` and `*\/host` to every
 * namespace, `./host` to the Gateway's own, `ns/host` to `ns` only.
 */
export function gatewayHostsFor(gw: AnalysisObject, viewerNamespace: string): string[] {
  const out: string[] = [];
  for (const server of asArray(field(gw.raw, 'spec', 'servers'))) {
    for (const h of asArray(field(server, 'hosts'))) {
      if (typeof h !== 'string') continue;
      const slash = h.indexOf('/');
      if (slash < 0) {
        out.push(h);
        continue;
      }
      const ns = h.slice(0, slash);
      const host = h.slice(slash + 1);
      if (ns === '*' || ns === viewerNamespace || (ns === '.' && gw.namespace === viewerNamespace)) out.push(host);
    }
  }
  return out;
}

/**
 * virtualservice.GatewayAnalyzer: each gateway a VirtualService binds to (except `mesh`) must
 * exist, and offer at least one of the VirtualService's hosts.
 */
@injectable()
export class VirtualServiceGatewayAnalyzer implements Analyzer {
  readonly metadata = {
    name: 'virtualservice.GatewayAnalyzer',
    description: 'Checks the gateways associated with each virtual service',
    inputs: ['Gateway', 'VirtualService'],
  };

  analyze(ctx: AnalysisContext): void {
    for (const vs of ctx.objects.of('VirtualService')) {
      const hosts = asArray(field(vs.raw, 'spec', 'hosts')).filter((h): h is string => typeof h === 'string');
      asArray(field(vs.raw, 'spec', 'gateways')).forEach((ref, i) => {
        if (typeof ref !== 'string' || ref === 'mesh') return;
        const [ns, name] = qualify(ref, vs.namespace);
        const gw = ctx.objects.get('Gateway', ns, name);
        const path = `spec.gateways[${i}]`;
        if (!gw) ctx.report('ReferencedResourceNotFound', vs, ['gateway', ref], path);
        const offered = gw ? gatewayHostsFor(gw, vs.namespace) : [];
        if (!offered.some((g) => hosts.some((h) => hostsOverlap(g, h)))) {
          ctx.report('VirtualServiceHostNotFoundInGateway', vs, [hosts, fullName(vs), ns ? `${ns}/${name}` : name], path);
        }
      });
    }
  }
}
