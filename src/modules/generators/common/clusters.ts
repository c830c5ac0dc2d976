/**
 * Builders shared by the Envoy sidecar generator and the proxyless gRPC generator: outbound
 * clusters of a service port (CDS), the load assignment of an outbound cluster (EDS) and the
 * virtual host of a service port (RDS). They return plain Envoy v3 objects in the form
 * `encodeMessage` takes (snake_case fields, Any as `{ '@type', ... }`); callers encode and
 * cache them. Nothing here memoizes: results are fresh objects the caller may mutate.
 *
 * `forGrpc` restricts the output to what gRPC's xDS client accepts (gRFC A27/A28/A31/A42/A44):
 * every cluster is EDS, load balancing is ROUND_ROBIN or RING_HASH, timeouts go to
 * `max_stream_duration`, retries name gRPC status codes only, and routes whose action is not
 * `route` (redirect, direct response) are left out, since gRPC rejects a whole route table
 * that contains one.
 */
import { ConfigResource } from '../../config/resource';
import {
  ConnectionPoolSettings, DestinationRuleSpec, LoadBalancerSettings, OutlierDetection, Subset, TrafficPolicy,
} from '../../config/kinds/destination-rule';
import {
  CorsPolicy, Destination, HTTPFaultInjection, HTTPMatchRequest, HTTPRetry, HTTPRoute, HTTPRouteDestination, HeaderOperations,
  Percent, StringMatch, VirtualServiceSpec,
} from '../../config/kinds/virtual-service';
import { Proxy } from '../../model/proxy';
import { PushContext } from '../../model/push-context';
import { isHttpProtocol, labelsMatch, Service, ServiceEndpoint, ServicePort } from '../../registry/model';
import { Duration } from '../../settings/duration';
import { jsonToStruct } from '../../xds/struct';
import { typeUrlOf } from '../../xds/type-urls';
import { ClusterContributor, EndpointContributor } from '../api';
import { outboundClusterName, parseClusterName } from '../naming';

type Obj = Record<string, unknown>;

/** `filter_metadata` key of the mesh's own cluster metadata. */
export const MESH_METADATA_KEY = 'mesh';
export const DEFAULT_CONNECT_TIMEOUT = { seconds: 10 };
/** Envoy's "no limit" for circuit-breaker thresholds (the incumbent's defaults). */
export const MAX_UINT32 = 4294967295;
export const HTTP_PROTOCOL_OPTIONS_KEY = 'envoy.extensions.upstreams.http.v3.HttpProtocolOptions';
export const FAULT_FILTER = 'envoy.filters.http.fault';
export const CORS_FILTER = 'envoy.filters.http.cors';
/** The incumbent's retry policy of a route whose VirtualService says nothing about retries. */
export const DEFAULT_RETRY_ON = 'connect-failure,refused-stream,unavailable,cancelled,retriable-status-codes';
/** retryOn conditions gRPC clients understand (status code names). */
export const GRPC_RETRY_ON = new Set(['cancelled', 'deadline-exceeded', 'internal', 'resource-exhausted', 'unavailable']);

/**
 * Enum values by name. `encodeMessage` verifies plain objects with protobufjs, whose verifier
 * takes enum numbers only (names pass only inside an Any, which it does not descend into), so
 * the builders write numbers through these names.
 */
export const EnvoyEnum = {
  ApiVersion: { V3: 2 },
  DiscoveryType: { STATIC: 0, STRICT_DNS: 1, LOGICAL_DNS: 2, EDS: 3, ORIGINAL_DST: 4 },
  LbPolicy: { ROUND_ROBIN: 0, LEAST_REQUEST: 1, RING_HASH: 2, RANDOM: 3, MAGLEV: 5, CLUSTER_PROVIDED: 6 },
  DnsLookupFamily: { V4_ONLY: 1 },
  HealthStatus: { HEALTHY: 1 },
  Denominator: { HUNDRED: 0, TEN_THOUSAND: 1, MILLION: 2 },
  HeaderAppendAction: { APPEND_IF_EXISTS_OR_ADD: 0, OVERWRITE_IF_EXISTS_OR_ADD: 2 },
  TrafficDirection: { INBOUND: 1, OUTBOUND: 2 },
  RedirectResponseCode: { MOVED_PERMANENTLY: 0, FOUND: 1, SEE_OTHER: 2, TEMPORARY_REDIRECT: 3, PERMANENT_REDIRECT: 4 },
} as const;

export const ADS_CONFIG_SOURCE = { ads: {}, resource_api_version: EnvoyEnum.ApiVersion.V3 };

const GRPC_CODES: Record<string, number> = {
  OK: 0, CANCELLED: 1, UNKNOWN: 2, INVALID_ARGUMENT: 3, DEADLINE_EXCEEDED: 4, NOT_FOUND: 5, ALREADY_EXISTS: 6, PERMISSION_DENIED: 7,
  RESOURCE_EXHAUSTED: 8, FAILED_PRECONDITION: 9, ABORTED: 10, OUT_OF_RANGE: 11, UNIMPLEMENTED: 12, INTERNAL: 13, UNAVAILABLE: 14,
  DATA_LOSS: 15, UNAUTHENTICATED: 16,
};

const REDIRECT_CODES: Record<number, number> = {
  301: EnvoyEnum.RedirectResponseCode.MOVED_PERMANENTLY,
  302: EnvoyEnum.RedirectResponseCode.FOUND,
  303: EnvoyEnum.RedirectResponseCode.SEE_OTHER,
  307: EnvoyEnum.RedirectResponseCode.TEMPORARY_REDIRECT,
  308: EnvoyEnum.RedirectResponseCode.PERMANENT_REDIRECT,
};

// ---------------------------------------------------------------------------------------------
// Small helpers
// ---------------------------------------------------------------------------------------------

/** A spec duration (`5s`, `100ms`) as a google.protobuf.Duration object. */
export function protoDuration(text: string): { seconds: number; nanos?: number } {
  const d = Duration.parse(text);
  const seconds = Number(d.nanos / 1_000_000_000n);
  const nanos = Number(d.nanos % 1_000_000_000n);
  return nanos ? { seconds, nanos } : { seconds };
}

/** A percentage (0–100, fractional) as a FractionalPercent per million; unset = 100%. */
export function fractionalPercent(p: Percent | undefined): { numerator: number; denominator: number } {
  const value = p?.value ?? 100;
  return { numerator: Math.round(value * 10_000), denominator: EnvoyEnum.Denominator.MILLION };
}

/** The short service name used in metadata: `<name>` of `<name>.<ns>.svc.<domain>`, else the host. */
export function serviceShortName(push: PushContext, service: Service): string {
  const suffix = `.${service.namespace}.svc.${push.options.domain}`;
  return service.hostname.endsWith(suffix) ? service.hostname.slice(0, -suffix.length) : service.hostname;
}

/** `metadata.filter_metadata.mesh` of a cluster: the services behind it and the subset. */
export function clusterMetadata(push: PushContext, service: Service, subset: string): Obj {
  const meta: Obj = { services: [{ host: service.hostname, name: serviceShortName(push, service), namespace: service.namespace }] };
  if (subset) meta.subset = subset;
  return { filter_metadata: { [MESH_METADATA_KEY]: jsonToStruct(meta) } };
}

export function defaultCircuitBreakers(): Obj {
  return {
    thresholds: [
      {
        max_connections: { value: MAX_UINT32 },
        max_pending_requests: { value: MAX_UINT32 },
        max_requests: { value: MAX_UINT32 },
        max_retries: { value: MAX_UINT32 },
        track_remaining: true,
      },
    ],
  };
}

/** An endpoint address: `unix://` paths become pipes, anything else a socket address. */
export function endpointAddress(address: string, port: number): Obj {
  if (address.startsWith('unix://')) return { pipe: { path: address.slice('unix://'.length) } };
  return { socket_address: { address, port_value: port } };
}

// ---------------------------------------------------------------------------------------------
// DestinationRule traffic policy
// ---------------------------------------------------------------------------------------------

/** The parts of a traffic policy that apply to one cluster, after subset and port merging. */
export interface EffectivePolicy {
  loadBalancer?: LoadBalancerSettings;
  connectionPool?: ConnectionPoolSettings;
  outlierDetection?: OutlierDetection;
}

/**
 * The incumbent's merge: the top-level policy, replaced wholesale by its portLevelSettings for
 * the port; then each field the subset's policy sets overrides it, and the subset's own
 * portLevelSettings for the port replace the result wholesale (port-level settings do not
 * inherit: what they leave out falls back to defaults).
 */
export function effectivePolicy(dr: DestinationRuleSpec | undefined, subset: Subset | undefined, port: number): EffectivePolicy {
  const atPort = (p: TrafficPolicy | undefined): EffectivePolicy | undefined => {
    if (!p) return undefined;
    const pl = (p.portLevelSettings ?? []).find((s) => s.port?.number === port);
    if (pl) return { loadBalancer: pl.loadBalancer, connectionPool: pl.connectionPool, outlierDetection: pl.outlierDetection };
    return { loadBalancer: p.loadBalancer, connectionPool: p.connectionPool, outlierDetection: p.outlierDetection };
  };
  const top = atPort(dr?.trafficPolicy) ?? {};
  const sp = subset?.trafficPolicy;
  if (!sp) return top;
  const spl = (sp.portLevelSettings ?? []).find((s) => s.port?.number === port);
  if (spl) return { loadBalancer: spl.loadBalancer, connectionPool: spl.connectionPool, outlierDetection: spl.outlierDetection };
  return {
    loadBalancer: sp.loadBalancer ?? top.loadBalancer,
    connectionPool: sp.connectionPool ?? top.connectionPool,
    outlierDetection: sp.outlierDetection ?? top.outlierDetection,
  };
}

/** The DestinationRule for `host` as seen by `proxy`, and the named subset of it. */
export function subsetOf(push: PushContext, proxy: Proxy, host: string, subset: string): { dr?: ConfigResource<DestinationRuleSpec>; subset?: Subset } {
  const dr = push.destinationRuleFor(host, proxy);
  return { dr, subset: subset ? dr?.spec.subsets?.find((s) => s.name === subset) : undefined };
}

function applyLoadBalancer(cluster: Obj, lb: LoadBalancerSettings | undefined, forGrpc: boolean): void {
  const ch = lb?.consistentHash;
  if (ch) {
    if (ch.maglev && !forGrpc) {
      cluster.lb_policy = EnvoyEnum.LbPolicy.MAGLEV;
      if (ch.maglev.tableSize) cluster.maglev_lb_config = { table_size: { value: ch.maglev.tableSize } };
    } else if (ch.ringHash) {
      cluster.lb_policy = EnvoyEnum.LbPolicy.RING_HASH;
      if (ch.ringHash.minimumRingSize) cluster.ring_hash_lb_config = { minimum_ring_size: { value: ch.ringHash.minimumRingSize } };
    } else {
      cluster.lb_policy = EnvoyEnum.LbPolicy.RING_HASH;
      cluster.ring_hash_lb_config = { minimum_ring_size: { value: ch.minimumRingSize || 1024 } };
    }
    return;
  }
  if (forGrpc) {
    // gRPC knows ROUND_ROBIN and RING_HASH only; anything else would be rejected.
    cluster.lb_policy = EnvoyEnum.LbPolicy.ROUND_ROBIN;
    return;
  }
  switch (lb?.simple) {
    case 'ROUND_ROBIN':
      cluster.lb_policy = EnvoyEnum.LbPolicy.ROUND_ROBIN;
      break;
    case 'RANDOM':
      cluster.lb_policy = EnvoyEnum.LbPolicy.RANDOM;
      break;
    case 'PASSTHROUGH':
      cluster.type = EnvoyEnum.DiscoveryType.ORIGINAL_DST;
      cluster.lb_policy = EnvoyEnum.LbPolicy.CLUSTER_PROVIDED;
      delete cluster.eds_cluster_config;
      delete cluster.load_assignment;
      delete cluster.dns_lookup_family;
      delete cluster.respect_dns_ttl;
      break;
    default:
      // LEAST_REQUEST, LEAST_CONN, UNSPECIFIED and unset: the incumbent's default.
      cluster.lb_policy = EnvoyEnum.LbPolicy.LEAST_REQUEST;
  }
}

function applyConnectionPool(cluster: Obj, pool: ConnectionPoolSettings | undefined, port: ServicePort): void {
  const threshold = (cluster.circuit_breakers as { thresholds: Obj[] }).thresholds[0];
  const tcp = pool?.tcp;
  const http = pool?.http;
  if (tcp?.connectTimeout) cluster.connect_timeout = protoDuration(tcp.connectTimeout);
  if (tcp?.maxConnections) threshold.max_connections = { value: tcp.maxConnections };
  if (http?.http1MaxPendingRequests) threshold.max_pending_requests = { value: http.http1MaxPendingRequests };
  if (http?.http2MaxRequests) threshold.max_requests = { value: http.http2MaxRequests };
  if (http?.maxRetries) threshold.max_retries = { value: http.maxRetries };
  const ka = tcp?.tcpKeepalive;
  if (ka) {
    const keepalive: Obj = {};
    if (ka.probes) keepalive.keepalive_probes = { value: ka.probes };
    if (ka.time) keepalive.keepalive_time = { value: Math.floor(Duration.parse(ka.time).seconds) };
    if (ka.interval) keepalive.keepalive_interval = { value: Math.floor(Duration.parse(ka.interval).seconds) };
    cluster.upstream_connection_options = { tcp_keepalive: keepalive };
  }
  if (!isHttpProtocol(port.protocol)) return;

  const common: Obj = {};
  if (http?.idleTimeout) common.idle_timeout = protoDuration(http.idleTimeout);
  if (http?.maxRequestsPerConnection) common.max_requests_per_connection = { value: http.maxRequestsPerConnection };
  if (tcp?.maxConnectionDuration) common.max_connection_duration = protoDuration(tcp.maxConnectionDuration);
  const h2 = port.protocol === 'HTTP2' || port.protocol === 'GRPC' || (port.protocol === 'HTTP' && http?.h2UpgradePolicy === 'UPGRADE');
  let upstream: Obj | undefined;
  if (http?.useClientProtocol) upstream = { use_downstream_protocol_config: { http_protocol_options: {}, http2_protocol_options: {} } };
  else if (h2) {
    upstream = { explicit_http_config: { http2_protocol_options: http?.maxConcurrentStreams ? { max_concurrent_streams: { value: http.maxConcurrentStreams } } : {} } };
  } else if (Object.keys(common).length > 0) upstream = { explicit_http_config: { http_protocol_options: {} } };
  if (!upstream) return;
  cluster.typed_extension_protocol_options = {
    [HTTP_PROTOCOL_OPTIONS_KEY]: {
      '@type': typeUrlOf(HTTP_PROTOCOL_OPTIONS_KEY),
      ...(Object.keys(common).length > 0 ? { common_http_protocol_options: common } : {}),
      ...upstream,
    },
  };
}

function applyOutlierDetection(cluster: Obj, od: OutlierDetection | undefined): void {
  if (!od) return;
  // Success-rate ejection is off; consecutive-error ejection is enforced at 100% when configured.
  const out: Obj = { enforcing_success_rate: { value: 0 } };
  if (od.consecutive5xxErrors !== undefined) {
    out.consecutive_5xx = { value: od.consecutive5xxErrors };
    out.enforcing_consecutive_5xx = { value: od.consecutive5xxErrors > 0 ? 100 : 0 };
  }
  if (od.consecutiveGatewayErrors !== undefined) {
    out.consecutive_gateway_failure = { value: od.consecutiveGatewayErrors };
    out.enforcing_consecutive_gateway_failure = { value: od.consecutiveGatewayErrors > 0 ? 100 : 0 };
  }
  if (od.interval) out.interval = protoDuration(od.interval);
  if (od.baseEjectionTime) out.base_ejection_time = protoDuration(od.baseEjectionTime);
  if (od.maxEjectionPercent) out.max_ejection_percent = { value: od.maxEjectionPercent };
  if (od.splitExternalLocalOriginErrors) {
    out.split_external_local_origin_errors = true;
    if (od.consecutiveLocalOriginFailures) {
      out.consecutive_local_origin_failure = { value: od.consecutiveLocalOriginFailures };
      out.enforcing_consecutive_local_origin_failure = { value: 100 };
    }
    out.enforcing_local_origin_success_rate = { value: 0 };
  }
  cluster.outlier_detection = out;
  // The incumbent turns the panic threshold off (0%) unless minHealthPercent says otherwise.
  cluster.common_lb_config = { healthy_panic_threshold: { value: od.minHealthPercent ?? 0 } };
}

// ---------------------------------------------------------------------------------------------
// CDS
// ---------------------------------------------------------------------------------------------

export interface OutboundClusterOptions {
  forGrpc: boolean;
  /** Applied, in order, to every cluster built (after the mesh's own settings). */
  contributors?: readonly ClusterContributor[];
  /** Applied to the endpoints of inline load assignments (DNS clusters). */
  endpointContributors?: readonly EndpointContributor[];
}

/**
 * The clusters of one service port: the default `outbound|<port>||<host>` and one per subset
 * of the DestinationRule the proxy sees for the host. ClusterContributors are given in
 * `options.contributors` and run last on each cluster.
 */
export function buildOutboundClusters(push: PushContext, proxy: Proxy, service: Service, port: ServicePort, options: OutboundClusterOptions): Obj[] {
  const dr = push.destinationRuleFor(service.hostname, proxy);
  const subsets: (Subset | undefined)[] = [undefined, ...(dr?.spec.subsets ?? [])];
  return subsets.map((subset) => {
    const name = subset?.name ?? '';
    const endpoints = subset ? push.endpoints(service.hostname, port.number).filter((ep) => labelsMatch(subset.labels, ep.labels)) : push.endpoints(service.hostname, port.number);
    const cluster = outboundCluster(push, service, port, name, endpoints, effectivePolicy(dr?.spec, subset, port.number), options);
    for (const c of options.contributors ?? []) c.patchCluster(cluster, { proxy, push, service, port, subset: name });
    return cluster;
  });
}

function outboundCluster(
  push: PushContext, service: Service, port: ServicePort, subset: string, endpoints: readonly ServiceEndpoint[], policy: EffectivePolicy,
  options: OutboundClusterOptions,
): Obj {
  const name = outboundClusterName(port.number, subset, service.hostname);
  const cluster: Obj = { name, connect_timeout: { ...DEFAULT_CONNECT_TIMEOUT } };
  const resolution = options.forGrpc ? 'STATIC' : service.resolution;
  switch (resolution) {
    case 'DNS':
    case 'DNS_ROUND_ROBIN': {
      cluster.type = resolution === 'DNS' ? EnvoyEnum.DiscoveryType.STRICT_DNS : EnvoyEnum.DiscoveryType.LOGICAL_DNS;
      cluster.dns_lookup_family = EnvoyEnum.DnsLookupFamily.V4_ONLY;
      cluster.respect_dns_ttl = true;
      // A DNS service without endpoints resolves its own host name.
      const eps = endpoints.length > 0 ? endpoints : [dnsSelfEndpoint(service, port)];
      // LOGICAL_DNS takes exactly one endpoint.
      cluster.load_assignment = loadAssignmentOf(name, resolution === 'DNS' ? eps : eps.slice(0, 1), options.endpointContributors);
      break;
    }
    case 'NONE':
      cluster.type = EnvoyEnum.DiscoveryType.ORIGINAL_DST;
      cluster.lb_policy = EnvoyEnum.LbPolicy.CLUSTER_PROVIDED;
      break;
    default:
      cluster.type = EnvoyEnum.DiscoveryType.EDS;
      cluster.eds_cluster_config = { eds_config: { ...ADS_CONFIG_SOURCE }, service_name: name };
  }
  cluster.circuit_breakers = defaultCircuitBreakers();
  if (cluster.type !== EnvoyEnum.DiscoveryType.ORIGINAL_DST) applyLoadBalancer(cluster, policy.loadBalancer, options.forGrpc);
  applyConnectionPool(cluster, policy.connectionPool, port);
  applyOutlierDetection(cluster, policy.outlierDetection);
  cluster.metadata = clusterMetadata(push, service, subset);
  return cluster;
}

function dnsSelfEndpoint(service: Service, port: ServicePort): ServiceEndpoint {
  return {
    hostname: service.hostname, servicePort: port, address: service.hostname, port: port.targetPort, labels: {}, weight: 1, locality: '',
    serviceAccount: '', namespace: service.namespace, network: '', workload: '',
  };
}

// ---------------------------------------------------------------------------------------------
// EDS
// ---------------------------------------------------------------------------------------------

/**
 * The ClusterLoadAssignment of an outbound cluster name: the service port's endpoints (for a
 * subset, those whose labels match the subset of the DestinationRule the proxy sees), grouped
 * by locality; each locality weighs the sum of its endpoints' weights. `undefined` when the
 * name is not an outbound cluster of a known service port and subset.
 */
export function buildLoadAssignment(push: PushContext, proxy: Proxy, clusterName: string, contributors?: readonly EndpointContributor[]): Obj | undefined {
  const parsed = parseClusterName(clusterName);
  if (!parsed || parsed.direction !== 'outbound') return undefined;
  const service = push.service(parsed.host);
  const port = service?.ports.find((p) => p.number === parsed.port);
  if (!service || !port) return undefined;
  let endpoints = push.endpoints(service.hostname, port.number);
  if (parsed.subset) {
    const { subset } = subsetOf(push, proxy, service.hostname, parsed.subset);
    if (!subset) return undefined;
    endpoints = endpoints.filter((ep) => labelsMatch(subset.labels, ep.labels));
  } else if (endpoints.length === 0 && (service.resolution === 'DNS' || service.resolution === 'DNS_ROUND_ROBIN')) {
    // As in the inline assignment of its cluster: a DNS service without endpoints is its own host name.
    endpoints = [dnsSelfEndpoint(service, port)];
  }
  return loadAssignmentOf(clusterName, endpoints, contributors);
}

/** Endpoints grouped by locality (sorted), each group weighted by the sum of its endpoint weights. */
export function loadAssignmentOf(clusterName: string, endpoints: readonly ServiceEndpoint[], contributors?: readonly EndpointContributor[]): Obj {
  const groups = new Map<string, { lbEndpoints: Obj[]; weight: number }>();
  for (const ep of endpoints) {
    // An endpoint without an address is reached through its network's gateway: not here.
    if (!ep.address) continue;
    const lbEndpoint: Obj = {
      endpoint: { address: endpointAddress(ep.address, ep.port) },
      health_status: EnvoyEnum.HealthStatus.HEALTHY,
      load_balancing_weight: { value: ep.weight },
    };
    for (const c of contributors ?? []) c.patchEndpoint(lbEndpoint, ep);
    const group = groups.get(ep.locality) ?? { lbEndpoints: [], weight: 0 };
    group.lbEndpoints.push(lbEndpoint);
    group.weight += ep.weight;
    groups.set(ep.locality, group);
  }
  const localities = [...groups.keys()].sort();
  return {
    cluster_name: clusterName,
    endpoints: localities.map((loc) => ({
      locality: localityOf(loc),
      lb_endpoints: groups.get(loc)!.lbEndpoints,
      load_balancing_weight: { value: groups.get(loc)!.weight },
    })),
  };
}

function localityOf(locality: string): Obj {
  const [region, zone, subZone] = locality.split('/');
  const out: Obj = {};
  if (region) out.region = region;
  if (zone) out.zone = zone;
  if (subZone) out.sub_zone = subZone;
  return out;
}

// ---------------------------------------------------------------------------------------------
// RDS
// ---------------------------------------------------------------------------------------------

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
    const suffix = `.svc.${push.options.domain}`;
    if (host.endsWith(suffix)) {
      const nameNs = host.slice(0, -suffix.length);
      const parts = nameNs.split('.');
      if (parts.length === 2) {
        if (parts[1] === proxy.namespace) names.push(parts[0]);
        names.push(nameNs, `${nameNs}.svc`);
      }
    }
  }
  return names.flatMap((n) => [n, `${n}:${port.number}`]);
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

function isCatchAll(m: HTTPMatchRequest | undefined): boolean {
  if (!m) return true;
  const uriAll = !m.uri || m.uri.prefix === '/';
  return uriAll && !m.scheme && !m.method && !m.authority && !m.headers && !m.withoutHeaders && !m.queryParams;
}

/** Match conditions on the source or the port that decide whether a match is used at all here. */
function matchApplies(m: HTTPMatchRequest, proxy: Proxy, port: ServicePort): boolean {
  if (m.port !== undefined && m.port !== port.number) return false;
  if (m.sourceLabels && !labelsMatch(m.sourceLabels, proxy.labels)) return false;
  if (m.sourceNamespace && m.sourceNamespace !== proxy.namespace) return false;
  if (m.gateways && m.gateways.length > 0 && !m.gateways.includes('mesh')) return false;
  return true;
}

function stringMatcher(m: StringMatch): Obj | undefined {
  if (m.exact !== undefined) return { exact: m.exact };
  if (m.prefix !== undefined && m.prefix !== '') return { prefix: m.prefix };
  if (m.regex !== undefined) return { safe_regex: { regex: m.regex } };
  return undefined;
}

function headerMatcher(name: string, m: StringMatch, invert = false): Obj {
  const sm = stringMatcher(m);
  // An empty prefix (or an empty match) only asks for the header to be present.
  const out: Obj = sm ? { name, string_match: sm } : { name, present_match: true };
  if (invert) out.invert_match = true;
  return out;
}

/** A VirtualService match as an Envoy RouteMatch. */
export function translateMatch(m: HTTPMatchRequest | undefined): Obj {
  const match: Obj = {};
  const uri = m?.uri;
  if (uri?.exact !== undefined) match.path = uri.exact;
  else if (uri?.regex !== undefined) match.safe_regex = { regex: uri.regex };
  else match.prefix = uri?.prefix || '/';
  if (m?.ignoreUriCase) match.case_sensitive = { value: false };
  const headers: Obj[] = [];
  for (const [name, sm] of Object.entries(m?.headers ?? {})) headers.push(headerMatcher(name.toLowerCase(), sm));
  for (const [name, sm] of Object.entries(m?.withoutHeaders ?? {})) headers.push(headerMatcher(name.toLowerCase(), sm, true));
  if (m?.method) headers.push(headerMatcher(':method', m.method));
  if (m?.authority) headers.push(headerMatcher(':authority', m.authority));
  if (m?.scheme) headers.push(headerMatcher(':scheme', m.scheme));
  if (headers.length) match.headers = headers;
  const query: Obj[] = [];
  for (const [name, sm] of Object.entries(m?.queryParams ?? {})) {
    const s = stringMatcher(sm);
    query.push(s && !(sm.exact === '') ? { name, string_match: s } : { name, present_match: true });
  }
  if (query.length) match.query_parameters = query;
  return match;
}

/** Everything of an Envoy route but its name and match. Undefined when the rule cannot be built. */
function buildRouteBody(
  push: PushContext, proxy: Proxy, vs: ConfigResource<VirtualServiceSpec>, http: HTTPRoute, service: Service, port: ServicePort,
  options: VirtualHostOptions,
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
    applyHeaderOps(out, merge(http.headers?.request, single?.request), merge(http.headers?.response, single?.response));
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

function applyTimeout(action: Obj, timeout: string | undefined, forGrpc: boolean): void {
  if (forGrpc) {
    if (timeout !== undefined) action.max_stream_duration = { max_stream_duration: protoDuration(timeout) };
    return;
  }
  // Unset means no timeout (0s), not Envoy's 15s default.
  action.timeout = timeout !== undefined ? protoDuration(timeout) : { seconds: 0 };
}

/**
 * The incumbent's retry policy: without `retries`, 2 retries on connect failures, refused
 * streams, `unavailable`, `cancelled` and 503; `attempts: 0` (or unset) turns retries off;
 * bare status codes in retryOn become retriable_status_codes.
 */
export function retryPolicy(retries: HTTPRetry | undefined, forGrpc: boolean, consistentHash: boolean): Obj | undefined {
  if (retries && (retries.attempts ?? 0) <= 0) return undefined;
  let retryOn = DEFAULT_RETRY_ON;
  let codes: number[] = [503];
  if (retries?.retryOn) {
    const parts = retries.retryOn.split(',').map((s) => s.trim()).filter((s) => s);
    codes = parts.filter((s) => /^\d+$/.test(s)).map(Number);
    const conditions = parts.filter((s) => !/^\d+$/.test(s));
    if (codes.length > 0 && !conditions.includes('retriable-status-codes')) conditions.push('retriable-status-codes');
    retryOn = conditions.join(',');
  }
  const numRetries = retries?.attempts ?? 2;
  if (forGrpc) {
    const grpcOn = retryOn.split(',').filter((s) => GRPC_RETRY_ON.has(s));
    if (grpcOn.length === 0) return undefined;
    const out: Obj = { retry_on: grpcOn.join(','), num_retries: { value: numRetries } };
    if (retries?.perTryTimeout) out.per_try_timeout = protoDuration(retries.perTryTimeout);
    return out;
  }
  const out: Obj = { retry_on: retryOn, num_retries: { value: numRetries } };
  if (retries?.perTryTimeout) out.per_try_timeout = protoDuration(retries.perTryTimeout);
  if (codes.length) out.retriable_status_codes = codes;
  // Retry on another host, unless consistent hashing pins requests to one.
  if (!consistentHash) {
    out.retry_host_predicate = [
      { name: 'envoy.retry_host_predicates.previous_hosts', typed_config: { '@type': typeUrlOf('envoy.extensions.retry.host.previous_hosts.v3.PreviousHostsPredicate') } },
    ];
  }
  out.host_selection_retry_max_attempts = 5;
  return out;
}

/** Route hash policies from the consistentHash of the DestinationRule of a destination. */
export function hashPolicies(push: PushContext, proxy: Proxy, host: string, subsetName: string, port: number): Obj[] {
  const { dr, subset } = subsetOf(push, proxy, host, subsetName);
  if (!dr) return [];
  const ch = effectivePolicy(dr.spec, subset, port).loadBalancer?.consistentHash;
  if (!ch) return [];
  if (ch.httpHeaderName) return [{ header: { header_name: ch.httpHeaderName } }];
  if (ch.httpCookie) {
    const cookie: Obj = { name: ch.httpCookie.name };
    if (ch.httpCookie.path) cookie.path = ch.httpCookie.path;
    if (ch.httpCookie.ttl) cookie.ttl = protoDuration(ch.httpCookie.ttl);
    return [{ cookie }];
  }
  if (ch.useSourceIp) return [{ connection_properties: { source_ip: true } }];
  if (ch.httpQueryParameterName) return [{ query_parameter: { name: ch.httpQueryParameterName } }];
  return [];
}

function merge(a: HeaderOperations | undefined, b: HeaderOperations | undefined): HeaderOperations | undefined {
  if (!a) return b;
  if (!b) return a;
  return { set: { ...a.set, ...b.set }, add: { ...a.add, ...b.add }, remove: [...(a.remove ?? []), ...(b.remove ?? [])] };
}

function isHostHeader(name: string): boolean {
  const n = name.toLowerCase();
  return n === 'host' || n === ':authority';
}

/** A `set` of Host/:authority is a host rewrite, not a header operation. */
function hostFromHeaders(ops: HeaderOperations | undefined): string | undefined {
  for (const [k, v] of Object.entries(ops?.set ?? {})) if (isHostHeader(k)) return v;
  return undefined;
}

function headerValueOptions(ops: HeaderOperations | undefined): Obj[] {
  const out: Obj[] = [];
  for (const [key, value] of Object.entries(ops?.set ?? {})) {
    if (!isHostHeader(key)) out.push({ header: { key, value }, append_action: EnvoyEnum.HeaderAppendAction.OVERWRITE_IF_EXISTS_OR_ADD });
  }
  for (const [key, value] of Object.entries(ops?.add ?? {})) out.push({ header: { key, value }, append_action: EnvoyEnum.HeaderAppendAction.APPEND_IF_EXISTS_OR_ADD });
  return out;
}

function applyHeaderOps(target: Obj, request: HeaderOperations | undefined, response: HeaderOperations | undefined): void {
  const reqAdd = headerValueOptions(request);
  const resAdd = headerValueOptions(response);
  if (reqAdd.length) target.request_headers_to_add = reqAdd;
  if (request?.remove?.length) target.request_headers_to_remove = [...request.remove];
  if (resAdd.length) target.response_headers_to_add = resAdd;
  if (response?.remove?.length) target.response_headers_to_remove = [...response.remove];
}

/** VirtualService fault injection as the fault filter's per-route HTTPFault. */
export function faultConfig(fault: HTTPFaultInjection | undefined): Obj | undefined {
  if (!fault) return undefined;
  const out: Obj = { '@type': typeUrlOf('envoy.extensions.filters.http.fault.v3.HTTPFault') };
  if (fault.delay?.fixedDelay) out.delay = { fixed_delay: protoDuration(fault.delay.fixedDelay), percentage: fractionalPercent(fault.delay.percentage) };
  const a = fault.abort;
  if (a) {
    if (a.httpStatus !== undefined) out.abort = { http_status: a.httpStatus, percentage: fractionalPercent(a.percentage) };
    else if (a.grpcStatus !== undefined) {
      const code = /^\d+$/.test(a.grpcStatus) ? Number(a.grpcStatus) : GRPC_CODES[a.grpcStatus.toUpperCase()];
      if (code !== undefined) out.abort = { grpc_status: code, percentage: fractionalPercent(a.percentage) };
    }
  }
  return out.delay || out.abort ? out : undefined;
}

/** A VirtualService CORS policy as the CORS filter's per-route CorsPolicy. */
export function corsConfig(cors: CorsPolicy): Obj {
  const out: Obj = { '@type': typeUrlOf('envoy.extensions.filters.http.cors.v3.CorsPolicy') };
  const origins = (cors.allowOrigins ?? []).map(stringMatcher).filter((m): m is Obj => m !== undefined);
  if (origins.length) out.allow_origin_string_match = origins;
  if (cors.allowMethods?.length) out.allow_methods = cors.allowMethods.join(',');
  if (cors.allowHeaders?.length) out.allow_headers = cors.allowHeaders.join(',');
  if (cors.exposeHeaders?.length) out.expose_headers = cors.exposeHeaders.join(',');
  if (cors.maxAge) out.max_age = String(Math.floor(Duration.parse(cors.maxAge).seconds));
  if (cors.allowCredentials !== undefined) out.allow_credentials = { value: cors.allowCredentials };
  if (cors.unmatchedPreflights) out.forward_not_matching_preflights = { value: cors.unmatchedPreflights !== 'IGNORE' };
  return out;
}
