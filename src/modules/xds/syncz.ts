import { loadMoreEnvoyProtos, encodeMessage } from '../envoy/protos';
import { jsonToStruct } from '../envoy/struct';
import { TypeUrl } from '../envoy/type-urls';
import { WatchState, XdsConnection } from './connection';
import { DebugResource } from './debug-requests';

/**
 * The debug type `mesh.io/debug/syncz` (the incumbent's `istio.io/debug/syncz`): asked on an
 * ADS stream, it is answered with one `envoy.service.status.v3.ClientConfig` per connected
 * proxy, saying for each xDS type whether the proxy has acknowledged what it was last sent.
 * It never becomes a subscription of the stream asking it.
 */
export const DEBUG_SYNCZ_TYPE = 'mesh.io/debug/syncz';
export const CLIENT_CONFIG_TYPE = 'type.googleapis.com/envoy.service.status.v3.ClientConfig';
const CSDS_PROTO = 'envoy/service/status/v3/csds.proto';

/** The xDS types reported for each proxy, in the incumbent's order (ECDS is never served here: NOT_SENT). */
const REPORTED_TYPES = [
  TypeUrl.Cluster,
  TypeUrl.Listener,
  TypeUrl.RouteConfiguration,
  TypeUrl.ClusterLoadAssignment,
  'type.googleapis.com/envoy.config.core.v3.TypedExtensionConfig',
] as const;

export type SyncStatus = 'SYNCED' | 'NOT_SENT' | 'STALE' | 'ERROR';

/** The incumbent's mapping: nothing sent = NOT_SENT, rejected = ERROR, last sent nonce acked = SYNCED, else STALE. */
export function syncStatus(watch: WatchState | undefined): SyncStatus {
  if (!watch || watch.nonceSent === '') return 'NOT_SENT';
  if (watch.rejected !== undefined) return 'ERROR';
  return watch.nonceAcked === watch.nonceSent ? 'SYNCED' : 'STALE';
}

/** One connection's ClientConfig, in our snake_case object form. */
export function clientConfig(conn: XdsConnection): object {
  const { proxy } = conn;
  const metadata: Record<string, string> = { CLUSTER_ID: proxy.clusterId, NAMESPACE: proxy.namespace };
  if (proxy.metadata.MESH_VERSION !== undefined) metadata.MESH_VERSION = proxy.metadata.MESH_VERSION;
  const watchedTypes = new Set<string>(conn.watched.keys());
  const types: string[] = [...REPORTED_TYPES, ...[...watchedTypes].filter((t) => !(REPORTED_TYPES as readonly string[]).includes(t))];
  return {
    node: { id: proxy.id, metadata: jsonToStruct(metadata) },
    generic_xds_configs: types.map((t) => ({ type_url: t, config_status: syncStatus(conn.watched.get(t as never)) })),
  };
}

let protosLoaded = false;

/** The proxies among `connections`: streams that only asked debug questions are left out. */
export function proxyConnections(connections: readonly XdsConnection[]): XdsConnection[] {
  return connections.filter((c) => !(c.debugClient && c.watched.size === 0)).sort((a, b) => (a.proxy.id < b.proxy.id ? -1 : a.proxy.id > b.proxy.id ? 1 : 0));
}

/** The syncz answer: one ClientConfig per proxy among `connections`, named by its ID. */
export function synczResources(connections: readonly XdsConnection[]): DebugResource[] {
  if (!protosLoaded) {
    loadMoreEnvoyProtos([CSDS_PROTO]);
    protosLoaded = true;
  }
  return proxyConnections(connections).map((c) => ({ name: c.proxy.id, typeUrl: CLIENT_CONFIG_TYPE, value: encodeMessage(CLIENT_CONFIG_TYPE, clientConfig(c)) }));
}
