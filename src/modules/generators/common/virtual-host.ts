/** RDS: the virtual host of a service port, from its VirtualService or one default route. */
import { ConfigResource } from '../../config/resource';
import { VirtualServiceSpec } from '../../config/kinds/virtual-service';
import { Proxy } from '../../model/proxy';
import { PushContext } from '../../model/push-context';
import { Service, ServicePort } from '../../registry/model';
import { outboundClusterName } from '../../model/naming';
import { buildRouteBody } from './route-action';
import { isCatchAll, matchApplies, translateMatch } from './route-match';
import { applyTimeout, hashPolicies, retryPolicy } from './route-policies';

type Obj = Record<string, unknown>;

export interface VirtualHostOptions {
  forGrpc: boolean;
  /** Also `<host>.` and `<host>.:<port>` (PILOT_ENABLE_ABSOLUTE_FQDN_VHOST_DOMAIN). Default false. */
  absoluteFqdn?: boolean;
  /**
   * Also the short forms of a `<name>.<ns>.svc.<domain>` host: `<name>.<ns>`, `<name>.<ns>.svc`,
   * and `<name>` from the same namespace, each with and without `:<port>`. Default false.
   */
  altHosts?: boolean;
}

/**
 * The virtual host `<host>:<port>` of a service port: its domains, and the routes of the
 * VirtualService for the host visible from the proxy's namespace (or one default route to
 * `outbound|<port>||<host>`).
 */
export function buildVirtualHost(push: PushContext, proxy: Proxy, service: Service, port: ServicePort, options: VirtualHostOptions): Obj {
  const host = service.hostname;
  const vs = push.virtualServiceFor(host, proxy.namespace);
  let routes = vs ? buildVirtualServiceRoutes(push, proxy, vs, service, port, options) : [];
  // A VirtualService whose rules do not apply here (other ports, other sources) leaves the default.
  if (routes.length === 0) routes = [defaultRoute(push, proxy, service, port, options)];
  return { name: `${host}:${port.number}`, domains: virtualHostDomains(push, proxy, service, port, options), routes };
}

export function virtualHostDomains(push: PushContext, proxy: Proxy, service: Service, port: ServicePort, options: VirtualHostOptions): string[] {
  const host = service.hostname;
  const names = [host];
  if (options.absoluteFqdn) names.push(`${host}.`);
  if (options.altHosts) {
    const nameNs = serviceNameAndNamespace(push, host);
    if (nameNs) {
      if (nameNs.namespace === proxy.namespace) names.push(nameNs.name);
      names.push(nameNs.both, `${nameNs.both}.svc`);
    }
  }
  return names.flatMap((n) => [n, `${n}:${port.number}`]);
}

/**
 * Whether a proxy in `namespace` reaches `host` by its short name too (`<name>` of a
 * `<name>.<namespace>.svc.<domain>` host): the only part of a host's default virtual host that
 * depends on who looks, besides the DestinationRule it sees.
 */
export function seesShortName(push: PushContext, namespace: string, host: string): boolean {
  return serviceNameAndNamespace(push, host)?.namespace === namespace;
}

/** `<name>`, `<namespace>` and `<name>.<namespace>` of a `<name>.<namespace>.svc.<domain>` host. */
function serviceNameAndNamespace(push: PushContext, host: string): { name: string; namespace: string; both: string } | undefined {
  const suffix = `.svc.${push.options.domain}`;
  if (!host.endsWith(suffix)) return undefined;
  const both = host.slice(0, -suffix.length);
  const parts = both.split('.');
  return parts.length === 2 ? { name: parts[0], namespace: parts[1], both } : undefined;
}

/** The route of a service port without a VirtualService. */
export function defaultRoute(push: PushContext, proxy: Proxy, service: Service, port: ServicePort, options: VirtualHostOptions): Obj {
  const hash = hashPolicies(push, proxy, service.hostname, '', port.number);
  const action: Obj = { cluster: outboundClusterName(port.number, '', service.hostname) };
  applyTimeout(action, undefined, options.forGrpc);
  const retry = retryPolicy(undefined, options.forGrpc, hash.length > 0);
  if (retry) action.retry_policy = retry;
  if (hash.length) action.hash_policy = hash;
  return { name: 'default', match: { prefix: '/' }, route: action };
}

function buildVirtualServiceRoutes(
  push: PushContext, proxy: Proxy, vs: ConfigResource<VirtualServiceSpec>, service: Service, port: ServicePort, options: VirtualHostOptions,
): Obj[] {
  const routes: Obj[] = [];
  for (const http of vs.spec.http ?? []) {
    if (http.delegate) continue;
    if (options.forGrpc && !(http.route?.length)) continue; // gRPC takes `route` actions only
    const matches = (http.match ?? []).filter((m) => matchApplies(m, proxy, port));
    if ((http.match?.length ?? 0) > 0 && matches.length === 0) continue;
    const base = buildRouteBody(push, proxy, vs, http, service, port, options);
    if (!base) continue;
    const list = matches.length > 0 ? matches : [undefined];
    for (const m of list) {
      const route: Obj = {};
      const name = [http.name, m?.name].filter((s) => s).join('.');
      if (name) route.name = name;
      route.match = translateMatch(m);
      Object.assign(route, structuredClone(base));
      routes.push(route);
    }
    // A rule without conditions catches everything: later rules are unreachable.
    if (list.length === 1 && isCatchAll(list[0])) break;
  }
  return routes;
}
