import { injectable } from 'inversify';
import { AnalysisContext, Analyzer } from '../analyzer';
import { AnalysisObject, asArray, field } from '../objects';
import { fullName } from './common';

const MESH_GATEWAY = 'mesh';
const ALL = '*';

interface MeshHost {
  vs: AnalysisObject;
  host: string;
  /** The namespaces that see this VirtualService (`*`: all). */
  scopes: ReadonlySet<string>;
}

function strings(v: unknown): string[] {
  return asArray(v).filter((x): x is string => typeof x === 'string');
}

/** `reviews` in `foo` is `reviews.foo.svc.cluster.local`; a host with a dot or a wildcard is whole. */
function fqdn(host: string, namespace: string): string {
  return host.includes('.') || host.startsWith('*') ? host : `${host}.${namespace}.svc.cluster.local`;
}

function visibleTogether(a: ReadonlySet<string>, b: ReadonlySet<string>): boolean {
  if (a.has(ALL) || b.has(ALL)) return true;
  return [...a].some((ns) => b.has(ns));
}

/** The hosts each VirtualService bound to the mesh gateway (no gateways = the mesh) serves, with who sees it. */
function meshHosts(ctx: AnalysisContext): MeshHost[] {
  return ctx.objects.of('VirtualService').flatMap((vs) => {
    const gateways = strings(field(vs.raw, 'spec', 'gateways'));
    if (gateways.length > 0 && !gateways.includes(MESH_GATEWAY)) return [];
    const exportTo = strings(field(vs.raw, 'spec', 'exportTo'));
    const scopes = new Set(exportTo.length === 0 || exportTo.includes(ALL) ? [ALL] : exportTo.map((e) => (e === '.' ? vs.namespace : e)));
    return strings(field(vs.raw, 'spec', 'hosts')).map((h) => ({ vs, host: fqdn(h, vs.namespace), scopes }));
  });
}

/**
 * virtualservice.ConflictingMeshGatewayHostsAnalyzer: two VirtualServices of the mesh gateway
 * that define the same host for a namespace that sees both leave the proxy to pick one
 * (MSH0109, once per VirtualService).
 */
@injectable()
export class ConflictingMeshGatewayHostsAnalyzer implements Analyzer {
  readonly metadata = {
    name: 'virtualservice.ConflictingMeshGatewayHostsAnalyzer',
    description: 'Checks if multiple virtual services associated with the mesh gateway have conflicting hosts',
    inputs: ['VirtualService'],
  };

  analyze(ctx: AnalysisContext): void {
    const byHost = new Map<string, MeshHost[]>();
    for (const entry of meshHosts(ctx)) byHost.set(entry.host, [...(byHost.get(entry.host) ?? []), entry]);
    const reported = new Set<AnalysisObject>();
    for (const [host, entries] of byHost) {
      for (const entry of entries) {
        if (reported.has(entry.vs)) continue;
        const others = entries.filter((o) => o.vs !== entry.vs && visibleTogether(o.scopes, entry.scopes));
        if (others.length === 0) continue;
        reported.add(entry.vs);
        const names = [entry, ...others].map((e) => fullName(e.vs)).join(',');
        ctx.report('ConflictingMeshGatewayVirtualServiceHosts', entry.vs, [names, host], 'spec.hosts');
      }
    }
  }
}
