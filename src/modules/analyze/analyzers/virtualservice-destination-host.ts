import { injectable } from 'inversify';
import { AnalysisContext, Analyzer } from '../analyzer';
import { AnalysisObject, asArray, asRecord, field } from '../objects';

const ALL = '*';
const LOCAL = '.';
const EXPORT_TO_ANNOTATION = 'networking.mesh.io/exportTo';

/** A host some namespace can see: a Service's FQDN or a ServiceEntry host, with its ports. */
interface VisibleHost {
  host: string;
  ports: number[];
}

/** `reviews` in `default` is `reviews.default.svc.cluster.local`; a host with a dot is already whole. */
function fqdn(host: string, namespace: string): string {
  return host.includes('.') || host === ALL || host.startsWith('*') ? host : `${host}.${namespace}.svc.cluster.local`;
}

/** Hosts by the namespace that sees them (`*`: every namespace), as exportTo says. */
class HostScopes {
  private readonly byScope = new Map<string, Map<string, VisibleHost>>();

  add(scopes: readonly string[], ownNamespace: string, entry: VisibleHost): void {
    const list = scopes.length ? scopes : [ALL];
    for (const s of list) {
      const scope = s === LOCAL ? ownNamespace : s;
      let hosts = this.byScope.get(scope);
      if (!hosts) this.byScope.set(scope, (hosts = new Map()));
      hosts.set(entry.host, entry);
    }
  }

  /**
   * What a VirtualService of `namespace` exported to `exportTo` reaches as `host`: exact names
   * seen from its own namespace (or from each namespace it is exported to), or by every
   * namespace; then wildcard hosts seen from its namespace or by all.
   */
  lookup(namespace: string, exportTo: readonly string[], host: string): VisibleHost | undefined {
    const name = fqdn(host, namespace);
    const scopes = exportTo.length ? exportTo.map((e) => (e === LOCAL ? namespace : e)) : [namespace];
    for (const scope of [...scopes, ALL]) {
      const found = this.byScope.get(scope)?.get(name);
      if (found) return found;
    }
    for (const scope of [namespace, ALL]) {
      for (const [candidate, entry] of this.byScope.get(scope) ?? []) {
        if (candidate.startsWith('*') && name.replace(/^\*/, '').endsWith(candidate.slice(1))) return entry;
      }
    }
    return undefined;
  }
}

function stringList(v: unknown): string[] {
  return asArray(v).filter((x): x is string => typeof x === 'string');
}

function visibleHosts(ctx: AnalysisContext): HostScopes {
  const scopes = new HostScopes();
  for (const se of ctx.objects.of('ServiceEntry')) {
    const ports = asArray(field(se.raw, 'spec', 'ports')).map((p) => Number(field(p, 'number') ?? 0));
    for (const host of stringList(field(se.raw, 'spec', 'hosts'))) scopes.add(stringList(field(se.raw, 'spec', 'exportTo')), se.namespace, { host: fqdn(host, se.namespace), ports });
  }
  for (const svc of ctx.objects.of('Service')) {
    const exportTo = (svc.annotations[EXPORT_TO_ANNOTATION] ?? '').split(',').map((s) => s.trim()).filter(Boolean);
    const ports = asArray(field(svc.raw, 'spec', 'ports')).map((p) => Number(field(p, 'port') ?? 0));
    scopes.add(exportTo, svc.namespace, { host: fqdn(svc.name, svc.namespace), ports });
  }
  return scopes;
}

interface Destination {
  /** `undefined` for a route without one. */
  destination: Record<string, unknown> | undefined;
  path: string;
}

/** Every route destination (HTTP, TCP, TLS), a missing one included. */
function routeDestinations(vs: AnalysisObject): Destination[] {
  return ['http', 'tcp', 'tls'].flatMap((kind) =>
    asArray(field(vs.raw, 'spec', kind)).flatMap((rule, i) =>
      asArray(field(rule, 'route')).map((route, j) => {
        const d = field(route, 'destination');
        return { destination: d === undefined || d === null ? undefined : asRecord(d), path: `spec.${kind}[${i}].route[${j}].destination` };
      }),
    ),
  );
}

/** HTTP mirror destinations (`mirror`, and each of `mirrors`). */
function mirrorDestinations(vs: AnalysisObject): Destination[] {
  return asArray(field(vs.raw, 'spec', 'http')).flatMap((rule, i) => {
    const out: Destination[] = [];
    const mirror = field(rule, 'mirror');
    if (mirror !== undefined && mirror !== null) out.push({ destination: asRecord(mirror), path: `spec.http[${i}].mirror` });
    asArray(field(rule, 'mirrors')).forEach((m, j) => out.push({ destination: asRecord(field(m, 'destination')), path: `spec.http[${i}].mirrors[${j}].destination` }));
    return out;
  });
}

/**
 * virtualservice.DestinationHostAnalyzer: each destination of a VirtualService must be a host
 * its namespace (or the namespaces it is exported to) can see, a port that host has, and a port
 * at all when the host has several (MSH0101, MSH0112).
 */
@injectable()
export class VirtualServiceDestinationHostAnalyzer implements Analyzer {
  readonly metadata = {
    name: 'virtualservice.DestinationHostAnalyzer',
    description: 'Checks the destination hosts associated with each virtual service',
    inputs: ['VirtualService', 'ServiceEntry', 'Service'],
  };

  analyze(ctx: AnalysisContext): void {
    const hosts = visibleHosts(ctx);
    for (const vs of ctx.objects.of('VirtualService')) {
      const exportTo = stringList(field(vs.raw, 'spec', 'exportTo'));
      const check = (d: Destination, what: string) => {
        const host = typeof d.destination?.host === 'string' ? d.destination.host : '';
        const found = hosts.lookup(vs.namespace, exportTo, host);
        if (!found) return ctx.report('ReferencedResourceNotFound', vs, [what, host], d.path);
        const port = field(d.destination, 'port', 'number');
        if (port === undefined || port === null) {
          if (found.ports.length > 1) ctx.report('VirtualServiceDestinationPortSelectorRequired', vs, [host, found.ports], d.path);
          return;
        }
        if (!found.ports.includes(Number(port))) ctx.report('ReferencedResourceNotFound', vs, [`${what}+port`, `${host}+${port}`], `${d.path}.port.number`);
      };
      for (const d of routeDestinations(vs)) check(d, 'host');
      for (const d of mirrorDestinations(vs)) check(d, 'mirror+host');
    }
  }
}
