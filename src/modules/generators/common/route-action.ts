/** The action of a VirtualService HTTP rule: route (with its destinations), redirect or direct response. */
import { ConfigResource } from '../../config/resource';
import { Destination, HTTPRoute, HTTPRouteDestination, VirtualServiceSpec } from '../../config/kinds/virtual-service';
import { Proxy } from '../../model/proxy';
import { PushContext } from '../../model/push-context';
import { Service, ServicePort } from '../../registry/model';
import { outboundClusterName } from '../../model/naming';
import { CORS_FILTER, EnvoyEnum, FAULT_FILTER } from './envoy-enums';
import { applyHeaderOps, hostFromHeaders, mergeHeaderOps } from './header-operations';
import { applyTimeout, corsConfig, faultConfig, fractionalPercent, hashPolicies, retryPolicy } from './route-policies';

type Obj = Record<string, unknown>;

const REDIRECT_CODES: Record<number, number> = {
  301: EnvoyEnum.RedirectResponseCode.MOVED_PERMANENTLY,
  302: EnvoyEnum.RedirectResponseCode.FOUND,
  303: EnvoyEnum.RedirectResponseCode.SEE_OTHER,
  307: EnvoyEnum.RedirectResponseCode.TEMPORARY_REDIRECT,
  308: EnvoyEnum.RedirectResponseCode.PERMANENT_REDIRECT,
};

/** Everything of an Envoy route but its name and match. Undefined when the rule cannot be built. */
export function buildRouteBody(
  push: PushContext, proxy: Proxy, vs: ConfigResource<VirtualServiceSpec>, http: HTTPRoute, service: Service, port: ServicePort,
  options: { forGrpc: boolean },
): Obj | undefined {
  const out: Obj = {};
  const vsNs = vs.metadata.namespace;
  let hostRewrite: string | undefined;

  if (http.redirect) {
    out.redirect = redirectAction(http);
  } else if (http.directResponse) {
    const dr = http.directResponse;
    const action: Obj = { status: dr.status };
    if (dr.body?.string !== undefined) action.body = { inline_string: dr.body.string };
    else if (dr.body?.bytes !== undefined) action.body = { inline_bytes: dr.body.bytes };
    out.direct_response = action;
  } else if (http.route?.length) {
    const action: Obj = {};
    const dests = weightedDestinations(http.route);
    if (dests.length === 0) return undefined;
    const resolved = dests.map((d) => ({ ...d, cluster: destinationCluster(push, d.dst.destination, vsNs, port) }));
    if (resolved.length === 1) {
      action.cluster = resolved[0].cluster.name;
      // The only destination's header operations apply to the whole route.
      hostRewrite = hostFromHeaders(resolved[0].dst.headers?.request);
    } else {
      action.weighted_clusters = {
        clusters: resolved.map((d) => {
          const cw: Obj = { name: d.cluster.name, weight: { value: d.weight } };
          if (!options.forGrpc) applyHeaderOps(cw, d.dst.headers?.request, d.dst.headers?.response);
          const h = hostFromHeaders(d.dst.headers?.request);
          if (h !== undefined && !options.forGrpc) cw.host_rewrite_literal = h;
          return cw;
        }),
      };
    }
    applyTimeout(action, http.timeout, options.forGrpc);
    const first = resolved[0].cluster;
    const hash = hashPolicies(push, proxy, first.host, first.subset, first.port);
    const retry = retryPolicy(http.retries, options.forGrpc, hash.length > 0);
    if (retry) action.retry_policy = retry;
    if (hash.length) action.hash_policy = hash;
    if (!options.forGrpc) {
      const rw = http.rewrite;
      if (rw?.uri !== undefined) action.prefix_rewrite = rw.uri;
      else if (rw?.uriRegexRewrite) action.regex_rewrite = { pattern: { regex: rw.uriRegexRewrite.match }, substitution: rw.uriRegexRewrite.rewrite };
      const authority = rw?.authority ?? hostFromHeaders(http.headers?.request) ?? hostRewrite;
      if (authority !== undefined) action.host_rewrite_literal = authority;
      if (http.mirror) {
        const mirror = destinationCluster(push, http.mirror, vsNs, port);
        action.request_mirror_policies = [{ cluster: mirror.name, runtime_fraction: { default_value: fractionalPercent(http.mirrorPercentage) } }];
      }
    }
    out.route = action;
  } else {
    return undefined;
  }

  if (!options.forGrpc) {
    const single = http.route?.length === 1 && !http.redirect && !http.directResponse ? http.route[0].headers : undefined;
    applyHeaderOps(out, mergeHeaderOps(http.headers?.request, single?.request), mergeHeaderOps(http.headers?.response, single?.response));
  }
  const perFilter: Obj = {};
  const fault = faultConfig(http.fault);
  if (fault) perFilter[FAULT_FILTER] = fault;
  if (http.corsPolicy && !options.forGrpc) perFilter[CORS_FILTER] = corsConfig(http.corsPolicy);
  if (Object.keys(perFilter).length) out.typed_per_filter_config = perFilter;
  return out;
}

function redirectAction(http: HTTPRoute): Obj {
  const rd = http.redirect!;
  const out: Obj = {};
  if (rd.uri !== undefined) out.path_redirect = rd.uri;
  if (rd.authority !== undefined) out.host_redirect = rd.authority;
  if (rd.scheme !== undefined) out.scheme_redirect = rd.scheme;
  if (rd.port !== undefined) out.port_redirect = rd.port;
  else if (rd.derivePort === 'FROM_PROTOCOL_DEFAULT') out.port_redirect = rd.scheme === 'https' ? 443 : 80;
  const code = REDIRECT_CODES[rd.redirectCode ?? 301];
  if (code) out.response_code = code;
  return out;
}

/** Destinations with their weights: unset weights split evenly, zero weights dropped when others have weight. */
function weightedDestinations(route: readonly HTTPRouteDestination[]): { dst: HTTPRouteDestination; weight: number }[] {
  if (route.every((r) => !r.weight)) return route.map((dst) => ({ dst, weight: route.length === 1 ? 100 : 1 }));
  return route.filter((r) => (r.weight ?? 0) > 0).map((dst) => ({ dst, weight: dst.weight! }));
}

/** The cluster a VirtualService destination names; its port defaults to the service's only port, else the route's port. */
export function destinationCluster(push: PushContext, dst: Destination, vsNamespace: string, port: ServicePort): { name: string; host: string; subset: string; port: number } {
  const host = push.qualify(dst.host, vsNamespace);
  const svc = push.service(host);
  const number = dst.port?.number ?? (svc && svc.ports.length === 1 ? svc.ports[0].number : port.number);
  const subset = dst.subset ?? '';
  return { name: outboundClusterName(number, subset, host), host, subset, port: number };
}
