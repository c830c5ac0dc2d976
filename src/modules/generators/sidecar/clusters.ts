/** CDS of a sidecar: outbound clusters of its scope, the fixed clusters, and its inbound clusters. */
import { Proxy } from '../../model/proxy';
import { PushContext } from '../../model/push-context';
import { Service } from '../../registry/model';
import { resourceKey } from '../../config/resource';
import { TypeUrl, typeUrlOf } from '../../envoy/type-urls';
import { concatRuns, XdsResource } from '../../model/generator';
import {
  buildOutboundClusters, clusterMetadata, meshConnectTimeout, defaultCircuitBreakers, EnvoyEnum, HTTP_PROTOCOL_OPTIONS_KEY,
} from '../common';
import { inboundClusterName } from '../../model/naming';
import { inboundDependencies, inboundKey, inboundPorts } from './inbound';
import { encodeNamed, pick, SidecarContext } from './options';
import { configKey, scopeHosts, sidecarScope } from './scope';

export const PASSTHROUGH_CLUSTER = 'PassthroughCluster';
export const BLACKHOLE_CLUSTER = 'BlackHoleCluster';
export const INBOUND_PASSTHROUGH_CLUSTER = 'InboundPassthroughCluster';
/** Source address of inbound passthrough connections, which capture rules let through. */
export const INBOUND_PASSTHROUGH_BIND = '127.0.0.6';

/** With `hosts`, only the outbound clusters of those hosts (those in the proxy's scope). */
export function sidecarClusters(
  ctx: SidecarContext, push: PushContext, proxy: Proxy, names: readonly string[] | undefined, hosts?: ReadonlySet<string>,
): XdsResource[] {
  const scope = sidecarScope(push, proxy);
  const key = configKey(push, proxy, scope);
  // Cached per service, so a change to one service rebuilds its clusters only. A service's
  // clusters read the service, the DestinationRule in force for the proxy (for its host) and
  // its endpoints (DNS clusters carry them; with mTLS, the service accounts clients accept),
  // which `host:` covers, and with mTLS the PeerAuthentications (auto mTLS); nothing else of
  // the proxy, so every scope that sees the same DestinationRule shares them. The list itself
  // follows the scope's services and is rebuilt each push.
  const dependencies = ['kind:DestinationRule', ...(ctx.mtls ? ['kind:PeerAuthentication'] : [])];
  const outboundOf = (service: Service): XdsResource[] => {
    const dr = push.destinationRuleFor(service.hostname, proxy);
    return push.cached('cds', `${ctx.memoPrefix}/out/${service.hostname}/${dr ? resourceKey(dr) : ''}`, [`host:${service.hostname}`, ...dependencies], () =>
      encodeNamed(
        TypeUrl.Cluster,
        service.ports.flatMap((port) =>
          buildOutboundClusters(push, proxy, service, port, {
            forGrpc: false,
            contributors: ctx.clusters,
            endpointContributors: ctx.endpoints,
            mtls: ctx.mtls && { options: ctx.mtls, source: 'sds' },
          }),
        ),
      ),
    );
  };
  if (hosts) {
    const inScope = scopeHosts(scope);
    const out: XdsResource[] = [];
    for (const host of hosts) {
      const service = inScope.get(host);
      if (service) out.push(...outboundOf(service));
    }
    return pick(out, names);
  }
  const outbound = push.memoize(`${ctx.memoPrefix}/out/${key}`, () => scope.services.flatMap(outboundOf));
  const fixed = push.memoize(`${ctx.memoPrefix}/cds-fixed`, () => encodeNamed(TypeUrl.Cluster, fixedClusters(push)));
  const inbound = push.cached('cds', `${ctx.memoPrefix}/cds-in/${inboundKey(push, proxy, false)}`, inboundDependencies(push, proxy), () =>
    encodeNamed(TypeUrl.Cluster, inboundClusters(ctx, push, proxy)),
  );
  // The outbound and fixed runs are the same arrays for every proxy of the scope.
  return names === undefined ? concatRuns([outbound, fixed, inbound]) : pick([...outbound, ...fixed, ...inbound], names);
}

function originalDst(push: PushContext, name: string): Record<string, unknown> {
  return {
    name,
    type: EnvoyEnum.DiscoveryType.ORIGINAL_DST,
    lb_policy: EnvoyEnum.LbPolicy.CLUSTER_PROVIDED,
    connect_timeout: meshConnectTimeout(push),
    circuit_breakers: defaultCircuitBreakers(),
  };
}

/** BlackHoleCluster (no endpoints), PassthroughCluster and InboundPassthroughCluster (original destination). */
export function fixedClusters(push: PushContext): Record<string, unknown>[] {
  const passthrough = originalDst(push, PASSTHROUGH_CLUSTER);
  // Speak to the destination in whatever protocol the client used.
  passthrough.typed_extension_protocol_options = {
    [HTTP_PROTOCOL_OPTIONS_KEY]: {
      '@type': typeUrlOf(HTTP_PROTOCOL_OPTIONS_KEY),
      use_downstream_protocol_config: { http_protocol_options: {}, http2_protocol_options: {} },
    },
  };
  const inboundPassthrough = originalDst(push, INBOUND_PASSTHROUGH_CLUSTER);
  inboundPassthrough.upstream_bind_config = { source_address: { address: INBOUND_PASSTHROUGH_BIND, port_value: 0 } };
  inboundPassthrough.typed_extension_protocol_options = passthrough.typed_extension_protocol_options;
  return [
    { name: BLACKHOLE_CLUSTER, type: EnvoyEnum.DiscoveryType.STATIC, connect_timeout: meshConnectTimeout(push), load_assignment: { cluster_name: BLACKHOLE_CLUSTER } },
    passthrough,
    inboundPassthrough,
  ];
}

/** `inbound|<service port>||` → the application at 127.0.0.1:<workload port> (DESIGN.md §7). */
export function inboundClusters(ctx: SidecarContext, push: PushContext, proxy: Proxy): Record<string, unknown>[] {
  return inboundPorts(push, proxy).map(({ endpoint, service }) => {
    const port = endpoint.servicePort;
    const name = inboundClusterName(port.number);
    const cluster: Record<string, unknown> = {
      name,
      type: EnvoyEnum.DiscoveryType.STATIC,
      connect_timeout: meshConnectTimeout(push),
      load_assignment: {
        cluster_name: name,
        endpoints: [{ lb_endpoints: [{ endpoint: { address: { socket_address: { address: '127.0.0.1', port_value: endpoint.port } } } }] }],
      },
      circuit_breakers: defaultCircuitBreakers(),
      metadata: clusterMetadata(push, service, ''),
    };
    if (port.protocol === 'HTTP2' || port.protocol === 'GRPC') {
      cluster.typed_extension_protocol_options = {
        [HTTP_PROTOCOL_OPTIONS_KEY]: { '@type': typeUrlOf(HTTP_PROTOCOL_OPTIONS_KEY), explicit_http_config: { http2_protocol_options: {} } },
      };
    }
    for (const c of ctx.clusters) c.patchCluster(cluster, { proxy, push, service, port, subset: '' });
    return cluster;
  });
}
