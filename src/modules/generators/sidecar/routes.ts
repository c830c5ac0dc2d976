/** RDS of a sidecar: the route table of each outbound HTTP port. */
import { Proxy } from '../../model/proxy';
import { PushContext } from '../../model/push-context';
import { ConfigResource, resourceKey } from '../../config/resource';
import { VirtualServiceSpec } from '../../config/kinds/virtual-service';
import { encodeMessage } from '../../envoy/protos';
import { protobufLibrary } from '../../shared/protobuf-library';
import { TypeUrl, typeUrlOf } from '../../envoy/type-urls';
import { internBody } from '../../model/body-interning';
import { XdsResource } from '../../model/generator';
import { Service, ServicePort } from '../../registry/model';
import { buildVirtualHost, seesShortName } from '../common';
import { PASSTHROUGH_CLUSTER } from './clusters';
import { SidecarContext } from './options';
import { configKey, labelsKey, labelSensitive, parseRouteName, routeNameOf, SidecarScope, sidecarScope } from './scope';

/** A route table reads every service on its port and the VirtualServices and DestinationRules for them. */
const ROUTE_DEPENDENCIES = ['services', 'kind:VirtualService', 'kind:DestinationRule'];

const VIRTUAL_HOST = typeUrlOf('envoy.config.route.v3.VirtualHost');

export function sidecarRoutes(ctx: SidecarContext, push: PushContext, proxy: Proxy, names: readonly string[] | undefined): XdsResource[] {
  const scope = sidecarScope(push, proxy);
  // Without capture there is no original destination to pass unknown hosts through to.
  const key = `${configKey(push, proxy, scope)}|${proxy.interceptionMode === 'NONE' ? 'uncaptured' : 'captured'}`;
  const out: XdsResource[] = [];
  for (const name of names ?? scope.ports.filter((p) => p.http.length > 0).map(routeNameOf)) {
    if (!parseRouteName(name)) continue;
    const table = push.cachedFromPrevious<RouteTable>('rds', `${ctx.memoPrefix}/${key}/${name}`, ROUTE_DEPENDENCIES, (previous) => routeTable(ctx, push, proxy, scope, name, previous));
    out.push({ name, body: table.body });
  }
  return out;
}

/** A route table as encoded, and the virtual hosts and catch-all it was assembled from. */
interface RouteTable {
  body: Buffer;
  hosts: readonly CachedVirtualHost[];
  catchAll: CatchAllMode;
}

/**
 * The route table `[<bind>:]<port>`: a virtual host per HTTP service of the scope on that port
 * (a domain already taken by an earlier host is left out), then the catch-all for other hosts:
 * PassthroughCluster (`allow_any`), or a 502 (`block_all`) under REGISTRY_ONLY and for
 * listeners without capture.
 *
 * Assembled from virtual hosts kept across pushes: a change to one service evicts every route
 * table (a table lists its port's services), but only that service's virtual host is built
 * and encoded again, and when every host comes out as before (another port of the service
 * changed) the table is the one it replaces, bytes and all, not assembled and hashed again.
 */
function routeTable(ctx: SidecarContext, push: PushContext, proxy: Proxy, scope: SidecarScope, name: string, previous: RouteTable | undefined): RouteTable {
  const entry = portEntry(scope, name);
  const viewer = virtualHostViewer(ctx, push, proxy);
  const hosts = (entry?.http ?? []).map(({ service, port }) => cachedVirtualHost(viewer, push, proxy, service, port));
  const catchAll = catchAllMode(proxy, scope, entry);
  if (previous && previous.catchAll === catchAll && sameHosts(previous.hosts, hosts)) return previous;
  return { body: encodeRouteConfiguration(name, hosts, catchAll), hosts, catchAll };
}

/** The bytes of the route table (fields in number order: name, virtual hosts, validate_clusters), as the whole message would encode. */
function encodeRouteConfiguration(name: string, hosts: readonly CachedVirtualHost[], catchAll: CatchAllMode): Buffer {
  const used = new Set<string>();
  const w = protobufLibrary().Writer.create();
  w.uint32((1 << 3) | 2).string(name);
  for (const vh of hosts) {
    if (!takesAnyTaken(vh.domains, used)) {
      // The usual case, a table of thousands of hosts: no domain taken, the host goes as it is.
      for (const d of vh.domains) used.add(d);
      w.uint32((2 << 3) | 2).bytes(vh.body);
      continue;
    }
    const domains = vh.domains.filter((d) => !used.has(d));
    if (domains.length === 0) continue;
    for (const d of domains) used.add(d);
    w.uint32((2 << 3) | 2).bytes(encodeMessage(VIRTUAL_HOST, { ...vh.message, domains }));
  }
  w.uint32((2 << 3) | 2).bytes(encodeMessage(VIRTUAL_HOST, catchAllVirtualHost(catchAll)));
  // validate_clusters, as the whole message would encode it.
  w.uint32((7 << 3) | 2).fork().uint32((1 << 3) | 0).bool(false).ldelim();
  return internBody(TypeUrl.RouteConfiguration, name, Buffer.from(w.finish()));
}

/** Whether two lists of virtual hosts encode the same table: the same hosts, or hosts with the same domains and bytes. */
function sameHosts(a: readonly CachedVirtualHost[], b: readonly CachedVirtualHost[]): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) {
    const x = a[i];
    const y = b[i];
    if (x === y) continue;
    if (x.domains.length !== y.domains.length || !x.domains.every((d, j) => d === y.domains[j]) || Buffer.compare(x.body, y.body) !== 0) return false;
  }
  return true;
}

interface CachedVirtualHost {
  message: Record<string, unknown>;
  domains: readonly string[];
  body: Uint8Array;
}

/**
 * One service port's virtual host, kept across pushes.
 *
 * Without a VirtualService for the host, it reads of its viewer only whether the host's short
 * name is theirs (same namespace) and which DestinationRule they see (its consistent-hash
 * policy): one such host is shared by every other namespace, so a connect storm builds a
 * service's virtual host about twice, not once per namespace. It reads the service and that
 * DestinationRule (`host:` and the kind cover them).
 *
 * With one, it reads the proxy's namespace (which VirtualService and DestinationRules it sees)
 * and, when config matches on them, its labels; the service, its VirtualService and
 * DestinationRule, and the services that VirtualService routes to (a destination without a
 * port takes its only one).
 */
function cachedVirtualHost(viewer: VirtualHostViewer, push: PushContext, proxy: Proxy, service: Service, port: ServicePort): CachedVirtualHost {
  const { ctx } = viewer;
  const host = service.hostname;
  const build = (): CachedVirtualHost => {
    const message = buildVirtualHost(push, proxy, service, port, { forGrpc: false, absoluteFqdn: ctx.absoluteFqdnDomain, altHosts: true });
    return { message, domains: message.domains as string[], body: encodeMessage(VIRTUAL_HOST, message) };
  };
  const portKey = `${host}/${port.number}/${port.name}/${port.protocol}`;
  const vs = push.virtualServiceFor(host, proxy.namespace);
  if (!vs) {
    const dr = push.destinationRuleFor(host, proxy);
    const viewerKey = `${seesShortName(push, proxy.namespace, host) ? proxy.namespace : '*'}|${dr ? resourceKey(dr) : ''}`;
    return push.cached('rds', `${ctx.memoPrefix}/vh-default/${viewerKey}/${portKey}`, [`host:${host}`, 'kind:DestinationRule'], build);
  }
  // Worked out on a miss only: most lookups are hits, and walking the VirtualService is not free.
  const dependencies = () => [`host:${host}`, 'kind:VirtualService', 'kind:DestinationRule', ...destinationHosts(push, vs)];
  return push.cached('rds', `${viewer.keyPrefix}${portKey}`, dependencies, build);
}

/** Who sees a virtual host, as its cache key begins: worked out once per route table, not per host. */
interface VirtualHostViewer {
  ctx: SidecarContext;
  keyPrefix: string;
}

function virtualHostViewer(ctx: SidecarContext, push: PushContext, proxy: Proxy): VirtualHostViewer {
  return { ctx, keyPrefix: `${ctx.memoPrefix}/vh/${proxy.namespace}|${labelSensitive(push) ? labelsKey(proxy.labels) : ''}/` };
}

function takesAnyTaken(domains: readonly string[], taken: ReadonlySet<string>): boolean {
  for (const d of domains) if (taken.has(d)) return true;
  return false;
}

/** `host:` tags of every host a VirtualService names (destinations, mirrors...), qualified in its namespace. */
function destinationHosts(push: PushContext, vs: ConfigResource<VirtualServiceSpec>): string[] {
  const out = new Set<string>();
  const walk = (value: unknown): void => {
    if (Array.isArray(value)) value.forEach(walk);
    else if (value && typeof value === 'object') {
      for (const [k, v] of Object.entries(value)) {
        if (k === 'host' && typeof v === 'string') out.add(`host:${push.qualify(v, vs.metadata.namespace)}`);
        else walk(v);
      }
    }
  };
  walk(vs.spec);
  return [...out];
}

function portEntry(scope: SidecarScope, name: string) {
  const parsed = parseRouteName(name)!;
  return scope.ports.find((p) => p.number === parsed.number && p.bind === parsed.bind);
}

/**
 * Passing through to the original destination needs a captured connection: a listener bound
 * to its own address would connect to itself.
 */
type CatchAllMode = 'ALLOW_ANY' | 'REGISTRY_ONLY';

function catchAllMode(proxy: Proxy, scope: SidecarScope, entry: ReturnType<typeof portEntry>): CatchAllMode {
  const captured = proxy.interceptionMode !== 'NONE' && !entry?.captureNone;
  return captured ? scope.outboundMode : 'REGISTRY_ONLY';
}

export function catchAllVirtualHost(mode: CatchAllMode): Record<string, unknown> {
  if (mode === 'REGISTRY_ONLY') {
    return { name: 'block_all', domains: ['*'], routes: [{ name: 'block_all', match: { prefix: '/' }, direct_response: { status: 502 } }] };
  }
  return {
    name: 'allow_any',
    domains: ['*'],
    routes: [{ name: 'allow_any', match: { prefix: '/' }, route: { cluster: PASSTHROUGH_CLUSTER, timeout: { seconds: 0 } } }],
  };
}
