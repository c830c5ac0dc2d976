/** A DestinationRule's traffic policy: which parts apply to a cluster, and how they set its fields. */
import { ConfigResource } from '../../config/resource';
import {
  ClientTLSSettings, ConnectionPoolSettings, DestinationRuleSpec, LoadBalancerSettings, OutlierDetection, Subset, TrafficPolicy,
} from '../../config/kinds/destination-rule';
import { Proxy } from '../../model/proxy';
import { PushContext } from '../../model/push-context';
import { isHttpProtocol, ServicePort } from '../../registry/model';
import { Duration } from '../../settings/duration';
import { typeUrlOf } from '../../envoy/type-urls';
import { protoDuration } from './durations';
import { EnvoyEnum, HTTP_PROTOCOL_OPTIONS_KEY } from './envoy-enums';

type Obj = Record<string, unknown>;

/** The parts of a traffic policy that apply to one cluster, after subset and port merging. */
export interface EffectivePolicy {
  loadBalancer?: LoadBalancerSettings;
  connectionPool?: ConnectionPoolSettings;
  outlierDetection?: OutlierDetection;
  tls?: ClientTLSSettings;
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
    if (pl) return { loadBalancer: pl.loadBalancer, connectionPool: pl.connectionPool, outlierDetection: pl.outlierDetection, tls: pl.tls };
    return { loadBalancer: p.loadBalancer, connectionPool: p.connectionPool, outlierDetection: p.outlierDetection, tls: p.tls };
  };
  const top = atPort(dr?.trafficPolicy) ?? {};
  const sp = subset?.trafficPolicy;
  if (!sp) return top;
  const spl = (sp.portLevelSettings ?? []).find((s) => s.port?.number === port);
  if (spl) return { loadBalancer: spl.loadBalancer, connectionPool: spl.connectionPool, outlierDetection: spl.outlierDetection, tls: spl.tls };
  return {
    loadBalancer: sp.loadBalancer ?? top.loadBalancer,
    connectionPool: sp.connectionPool ?? top.connectionPool,
    outlierDetection: sp.outlierDetection ?? top.outlierDetection,
    tls: sp.tls ?? top.tls,
  };
}

/** The DestinationRule for `host` as seen by `proxy`, and the named subset of it. */
export function subsetOf(push: PushContext, proxy: Proxy, host: string, subset: string): { dr?: ConfigResource<DestinationRuleSpec>; subset?: Subset } {
  const dr = push.destinationRuleFor(host, proxy);
  return { dr, subset: subset ? dr?.spec.subsets?.find((s) => s.name === subset) : undefined };
}

export function applyLoadBalancer(cluster: Obj, lb: LoadBalancerSettings | undefined, forGrpc: boolean): void {
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

export function applyConnectionPool(cluster: Obj, pool: ConnectionPoolSettings | undefined, port: ServicePort): void {
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

export function applyOutlierDetection(cluster: Obj, od: OutlierDetection | undefined): void {
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
