/** RDS of a sidecar: the route table of each outbound HTTP port. */
import { Proxy } from '../../model/proxy';
import { PushContext } from '../../model/push-context';
import { TypeUrl } from '../../envoy/type-urls';
import { encodeResource } from '../../model/body-interning';
import { XdsResource } from '../../model/generator';
import { buildVirtualHost } from '../common';
import { PASSTHROUGH_CLUSTER } from './clusters';
import { SidecarContext } from './options';
import { configKey, parseRouteName, routeNameOf, SidecarScope, sidecarScope } from './scope';

/** A route table reads every service on its port and the VirtualServices and DestinationRules for them. */
const ROUTE_DEPENDENCIES = ['services', 'kind:VirtualService', 'kind:DestinationRule'];

export function sidecarRoutes(ctx: SidecarContext, push: PushContext, proxy: Proxy, names: readonly string[] | undefined): XdsResource[] {
  const scope = sidecarScope(push, proxy);
  // Without capture there is no original destination to pass unknown hosts through to.
  const key = `${configKey(push, proxy, scope)}|${proxy.interceptionMode === 'NONE' ? 'uncaptured' : 'captured'}`;
  const out: XdsResource[] = [];
  for (const name of names ?? scope.ports.filter((p) => p.http.length > 0).map(routeNameOf)) {
    if (!parseRouteName(name)) continue;
    const body = push.cached('rds', `${ctx.memoPrefix}/${key}/${name}`, ROUTE_DEPENDENCIES, () =>
      encodeResource(TypeUrl.RouteConfiguration, name, buildRouteConfiguration(ctx, push, proxy, scope, name)),
    );
    out.push({ name, body });
  }
  return out;
}

/**
 * The route table `[<bind>:]<port>`: a virtual host per HTTP service of the scope on that port
 * (a domain already taken by an earlier host is left out), then the catch-all for other hosts:
 * PassthroughCluster (`allow_any`), or a 502 (`block_all`) under REGISTRY_ONLY and for
 * listeners without capture.
 */
export function buildRouteConfiguration(ctx: SidecarContext, push: PushContext, proxy: Proxy, scope: SidecarScope, name: string): Record<string, unknown> {
  const parsed = parseRouteName(name)!;
  const entry = scope.ports.find((p) => p.number === parsed.number && p.bind === parsed.bind);
  const used = new Set<string>();
  const virtualHosts: Record<string, unknown>[] = [];
  for (const { service, port } of entry?.http ?? []) {
    const vh = buildVirtualHost(push, proxy, service, port, { forGrpc: false, absoluteFqdn: ctx.absoluteFqdnDomain, altHosts: true });
    const domains = (vh.domains as string[]).filter((d) => !used.has(d));
    if (domains.length === 0) continue;
    domains.forEach((d) => used.add(d));
    virtualHosts.push({ ...vh, domains });
  }
  // Passing through to the original destination needs a captured connection: a listener
  // bound to its own address would connect to itself.
  const captured = proxy.interceptionMode !== 'NONE' && !entry?.captureNone;
  virtualHosts.push(catchAllVirtualHost(captured ? scope.outboundMode : 'REGISTRY_ONLY'));
  return { name, virtual_hosts: virtualHosts, validate_clusters: { value: false } };
}

export function catchAllVirtualHost(mode: 'ALLOW_ANY' | 'REGISTRY_ONLY'): Record<string, unknown> {
  if (mode === 'REGISTRY_ONLY') {
    return { name: 'block_all', domains: ['*'], routes: [{ name: 'block_all', match: { prefix: '/' }, direct_response: { status: 502 } }] };
  }
  return {
    name: 'allow_any',
    domains: ['*'],
    routes: [{ name: 'allow_any', match: { prefix: '/' }, route: { cluster: PASSTHROUGH_CLUSTER, timeout: { seconds: 0 } } }],
  };
}
