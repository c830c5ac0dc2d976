/** CDS: the outbound clusters of a service port, with the DestinationRule's policy applied. */
import { Subset } from '../../config/kinds/destination-rule';
import { Proxy } from '../../model/proxy';
import { PushContext } from '../../model/push-context';
import { labelsMatch, Service, ServiceEndpoint, ServicePort } from '../../registry/model';
import { applyClusterTls, CertificateSource, ResolvedMtlsOptions } from '../../security/mtls';
import { ClusterContributor, EndpointContributor } from '../../model/generator';
import { outboundClusterName } from '../../model/naming';
import { clusterMetadata } from './cluster-metadata';
import { msDuration } from './durations';
import { ADS_CONFIG_SOURCE, EnvoyEnum, HTTP_PROTOCOL_OPTIONS_KEY } from './envoy-enums';
import { dnsSelfEndpoint, loadAssignmentOf } from './load-assignment';
import { applyConnectionPool, applyLoadBalancer, applyOutlierDetection, EffectivePolicy, effectivePolicy } from './traffic-policy';

type Obj = Record<string, unknown>;

/** The mesh config's `connectTimeout` (10 s by default): clusters' connect timeout unless a DestinationRule sets one. */
export function meshConnectTimeout(push: PushContext): { seconds: number; nanos?: number } {
  return msDuration(push.mesh.connectTimeoutMs);
}

/** Envoy's "no limit" for circuit-breaker thresholds (the incumbent's defaults). */
export const MAX_UINT32 = 4294967295;

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

export interface OutboundClusterOptions {
  forGrpc: boolean;
  /** Applied, in order, to every cluster built (after the mesh's own settings). */
  contributors?: readonly ClusterContributor[];
  /** Applied to the endpoints of inline load assignments (DNS clusters). */
  endpointContributors?: readonly EndpointContributor[];
  /** Client-side TLS (DestinationRule TLS, auto mTLS) and where certificates come from; none when absent. */
  mtls?: { options: ResolvedMtlsOptions; source: CertificateSource };
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
    const policy = effectivePolicy(dr?.spec, subset, port.number);
    const cluster = outboundCluster(push, service, port, name, endpoints, policy, options);
    if (options.mtls) {
      const target = { push, service, port, subset: name, endpoints, tls: policy.tls, http2: speaksHttp2(cluster) };
      applyClusterTls(cluster, target, options.mtls.options, options.mtls.source);
    }
    for (const c of options.contributors ?? []) c.patchCluster(cluster, { proxy, push, service, port, subset: name });
    return cluster;
  });
}

/** Whether the cluster's protocol options make it speak HTTP/2 upstream (explicitly). */
function speaksHttp2(cluster: Obj): boolean {
  const protocol = (cluster.typed_extension_protocol_options as Record<string, { explicit_http_config?: Obj }> | undefined)?.[HTTP_PROTOCOL_OPTIONS_KEY];
  return protocol?.explicit_http_config?.http2_protocol_options !== undefined;
}

function outboundCluster(
  push: PushContext, service: Service, port: ServicePort, subset: string, endpoints: readonly ServiceEndpoint[], policy: EffectivePolicy,
  options: OutboundClusterOptions,
): Obj {
  const name = outboundClusterName(port.number, subset, service.hostname);
  const cluster: Obj = { name, connect_timeout: meshConnectTimeout(push) };
  const resolution = options.forGrpc ? 'STATIC' : service.resolution;
  switch (resolution) {
    case 'DNS':
    case 'DNS_ROUND_ROBIN': {
      cluster.type = resolution === 'DNS' ? EnvoyEnum.DiscoveryType.STRICT_DNS : EnvoyEnum.DiscoveryType.LOGICAL_DNS;
      cluster.dns_lookup_family = EnvoyEnum.DnsLookupFamily.V4_ONLY;
      cluster.respect_dns_ttl = true;
      // Used when resolution fails; otherwise the records' TTL applies.
      cluster.dns_refresh_rate = msDuration(push.mesh.dnsRefreshRateMs);
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
