/**
 * The Envoy v3 bootstrap the agent generates (the shape of the incumbent's default template):
 * the node, the admin port on localhost, ADS through the agent's xDS proxy (Unix socket
 * `<configPath>/XDS`), SDS through the agent's SDS socket, and two static listeners: the
 * Prometheus stats port (PROXY_METRICS_PORT, `/stats/prometheus` → the admin stats) and the
 * readiness port (PROXY_STATUS_PORT, `/healthz/ready` → the agent's status port); Envoy runtime
 * flags in a static runtime layer, and an admin layer.
 *
 * Written as proto3 JSON, the form Envoy reads with `-c`.
 */
import * as path from 'node:path';
import type { AdsNode } from '../../proxy/xds/xds-client';
import type { Json } from './proto-json';

/** Where the agent's SDS server listens, relative to the agent's working directory (as the incumbent's). */
export const DEFAULT_SDS_SOCKET_PATH = './var/run/secrets/workload-spiffe-uds/socket';

/** The agent's xDS proxy socket for a ProxyConfig `configPath`: `<configPath>/XDS`. */
export function xdsSocketPath(configPath: string): string {
  return path.posix.join(configPath, 'XDS');
}

/** The bootstrap file the agent writes in ProxyConfig `configPath`. */
export const ENVOY_BOOTSTRAP_FILE = 'envoy-rev.json';

export type IpFamily = 'v4' | 'v6';

/** `v6` when every instance address is IPv6 (Envoy then binds and connects over IPv6), else `v4`. */
export function proxyIpFamily(instanceIps: readonly string[]): IpFamily {
  return instanceIps.length > 0 && instanceIps.every((ip) => ip.includes(':')) ? 'v6' : 'v4';
}

export interface EnvoyBootstrapOptions {
  /** The xDS node as `agentNode()` builds it: id, cluster (`--serviceCluster`), metadata. */
  node: AdsNode;
  /** ProxyConfig `proxyAdminPort` (15000). */
  proxyAdminPort: number;
  /** ProxyConfig `statusPort`: where the agent's own status server listens (15020). */
  agentStatusPort: number;
  /** PROXY_STATUS_PORT: Envoy's readiness listener (15021). */
  proxyStatusPort: number;
  /** PROXY_METRICS_PORT: Envoy's Prometheus listener (15090). */
  proxyMetricsPort: number;
  /** The agent's xDS proxy socket; default `xdsSocketPath(configPath)`. */
  xdsSocketPath: string;
  /** The agent's SDS socket; default DEFAULT_SDS_SOCKET_PATH. */
  sdsSocketPath: string;
  /** Incremental (delta) ADS rather than state of the world. */
  delta: boolean;
  /** `v6` binds `::` and uses `::1`; default `v4`. */
  ipFamily?: IpFamily;
  /** `--outlierLogPath`: where Envoy writes outlier detection events; empty = not written. */
  outlierLogPath?: string;
  /** HTTP_STRIP_FRAGMENT_FROM_PATH_UNSAFE_IF_DISABLED: drop `#fragment` from request paths (default true). */
  stripFragmentFromPath?: boolean;
}

type JsonObject = { [key: string]: Json };

/** The agent's default bootstrap, as a proto3 JSON document. */
export function defaultEnvoyBootstrap(options: EnvoyBootstrapOptions): JsonObject {
  const localhost = options.ipFamily === 'v6' ? '::1' : '127.0.0.1';
  const wildcard = options.ipFamily === 'v6' ? '::' : '0.0.0.0';
  const bootstrap: JsonObject = {
    node: {
      id: options.node.id,
      cluster: options.node.cluster,
      metadata: options.node.metadata as JsonObject,
    },
    admin: {
      // The admin API answers anyone who reaches it: localhost only, and its own log is noise.
      access_log: [{ name: 'envoy.access_loggers.file', typed_config: { '@type': 'type.googleapis.com/envoy.extensions.access_loggers.file.v3.FileAccessLog', path: '/dev/null' } }],
      address: socketAddress(localhost, options.proxyAdminPort),
    },
    dynamic_resources: {
      lds_config: adsSource(),
      cds_config: adsSource(),
      ads_config: {
        api_type: options.delta ? 'DELTA_GRPC' : 'GRPC',
        set_node_on_first_message_only: true,
        transport_api_version: 'V3',
        grpc_services: [{ envoy_grpc: { cluster_name: 'xds-grpc' } }],
      },
    },
    static_resources: {
      clusters: [
        staticCluster('prometheus_stats', socketAddress(localhost, options.proxyAdminPort), '0.250s'),
        staticCluster('agent', socketAddress(localhost, options.agentStatusPort), '0.250s'),
        { ...staticCluster('sds-grpc', { pipe: { path: options.sdsSocketPath } }, '1s'), typed_extension_protocol_options: http2Only() },
        {
          ...staticCluster('xds-grpc', { pipe: { path: options.xdsSocketPath } }, '1s'),
          // One ADS stream carries every proxy's config: never let circuit breaking cut it.
          circuit_breakers: {
            thresholds: ['DEFAULT', 'HIGH'].map((priority) => ({ priority, max_connections: 100000, max_pending_requests: 100000, max_requests: 100000 })),
          },
          upstream_connection_options: { tcp_keepalive: { keepalive_time: 300 } },
          typed_extension_protocol_options: http2Only(),
        },
      ],
      listeners: [
        httpListener('stats', socketAddress(wildcard, options.proxyMetricsPort), '/stats/prometheus', 'prometheus_stats'),
        httpListener('agent', socketAddress(wildcard, options.proxyStatusPort), '/healthz/ready', 'agent'),
      ],
    },
  };
  bootstrap.layered_runtime = {
    layers: [
      { name: 'global config', static_layer: runtimeFlags(options) },
      { name: 'admin', admin_layer: {} },
    ],
  };
  if (options.outlierLogPath) bootstrap.cluster_manager = { outlier_detection: { event_log_path: options.outlierLogPath } };
  return bootstrap;
}

/**
 * Envoy runtime flags, as the incumbent's agent sets them: a request path with a `#fragment`
 * has it stripped rather than being rejected, and kept (Envoy's deprecated, unsafe behaviour)
 * when HTTP_STRIP_FRAGMENT_FROM_PATH_UNSAFE_IF_DISABLED is false.
 */
function runtimeFlags(options: Pick<EnvoyBootstrapOptions, 'stripFragmentFromPath'>): JsonObject {
  const flags: JsonObject = { 'envoy.reloadable_features.http_reject_path_with_fragment': false };
  if (options.stripFragmentFromPath === false) flags['envoy.reloadable_features.http_strip_fragment_from_path_unsafe_if_disabled'] = false;
  return flags;
}

function socketAddress(address: string, port: number): JsonObject {
  return { socket_address: { protocol: 'TCP', address, port_value: port } };
}

function adsSource(): JsonObject {
  // No initial fetch timeout: Envoy waits for the first config rather than starting empty.
  return { ads: {}, initial_fetch_timeout: '0s', resource_api_version: 'V3' };
}

function staticCluster(name: string, address: JsonObject, connectTimeout: string): JsonObject {
  return {
    name,
    type: 'STATIC',
    connect_timeout: connectTimeout,
    lb_policy: 'ROUND_ROBIN',
    load_assignment: { cluster_name: name, endpoints: [{ lb_endpoints: [{ endpoint: { address } }] }] },
  };
}

function http2Only(): JsonObject {
  return {
    'envoy.extensions.upstreams.http.v3.HttpProtocolOptions': {
      '@type': 'type.googleapis.com/envoy.extensions.upstreams.http.v3.HttpProtocolOptions',
      explicit_http_config: { http2_protocol_options: {} },
    },
  };
}

function httpListener(statPrefix: string, address: JsonObject, pathPrefix: string, cluster: string): JsonObject {
  return {
    address,
    filter_chains: [
      {
        filters: [
          {
            name: 'envoy.filters.network.http_connection_manager',
            typed_config: {
              '@type': 'type.googleapis.com/envoy.extensions.filters.network.http_connection_manager.v3.HttpConnectionManager',
              codec_type: 'AUTO',
              stat_prefix: statPrefix,
              route_config: { virtual_hosts: [{ name: 'backend', domains: ['*'], routes: [{ match: { prefix: pathPrefix }, route: { cluster } }] }] },
              http_filters: [{ name: 'envoy.filters.http.router', typed_config: { '@type': 'type.googleapis.com/envoy.extensions.filters.http.router.v3.Router' } }],
            },
          },
        ],
      },
    ],
  };
}
