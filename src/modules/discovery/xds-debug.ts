import { markedVersion, XdsConnection } from '../xds/connection';
import { decodeMessage } from '../envoy/protos';
import { SHORT_TYPE, TypeUrl, XdsTypeUrl } from '../envoy/type-urls';
import { ConfigDumpType } from '../envoy/well-known';

/** `/debug/syncz`: each connected proxy and, per type, what was sent and what it acknowledged. */
export function syncz(connections: readonly XdsConnection[]): unknown[] {
  return connections.map((c) => ({
    proxy: c.proxy.id,
    connectionId: c.id,
    protocol: c.protocol,
    peer: c.peer,
    generator: c.proxy.generator || 'envoy',
    connectedAt: c.connectedAt.toISOString(),
    types: Object.fromEntries(
      [...c.watched.entries()].map(([typeUrl, w]) => [
        SHORT_TYPE[typeUrl],
        {
          subscribed: w.names ? [...w.names].sort() : '*',
          resources: w.sent.size,
          sent: { version: w.versionSent, nonce: w.nonceSent, at: w.sentAt ? new Date(w.sentAt).toISOString() : undefined },
          acked: { version: w.versionAcked, nonce: w.nonceAcked, at: w.ackedAt ? new Date(w.ackedAt).toISOString() : undefined },
          status: w.rejected !== undefined ? 'NACKED' : w.nonceSent === '' ? 'NOT_SENT' : w.nonceAcked === w.nonceSent ? 'SYNCED' : 'STALE',
          ...(w.rejected !== undefined ? { error: w.rejected } : {}),
        },
      ]),
    ),
  }));
}

/** The Envoy resource types of a config dump (the name table is not Envoy config). */
type DumpedTypeUrl = Exclude<XdsTypeUrl, typeof TypeUrl.NameTable>;

const DUMP_TYPES: Record<DumpedTypeUrl, { dump: string; list: string; item: (name: string, version: string, body: Record<string, unknown>) => object }> = {
  [TypeUrl.Cluster]: {
    dump: ConfigDumpType.Clusters,
    list: 'dynamic_active_clusters',
    item: (_n, version, body) => ({ version_info: version, cluster: { '@type': TypeUrl.Cluster, ...body } }),
  },
  [TypeUrl.ClusterLoadAssignment]: {
    dump: ConfigDumpType.Endpoints,
    list: 'dynamic_endpoint_configs',
    item: (_n, version, body) => ({ version_info: version, endpoint_config: { '@type': TypeUrl.ClusterLoadAssignment, ...body } }),
  },
  [TypeUrl.Listener]: {
    dump: ConfigDumpType.Listeners,
    list: 'dynamic_listeners',
    item: (name, version, body) => ({ name, active_state: { version_info: version, listener: { '@type': TypeUrl.Listener, ...body } } }),
  },
  [TypeUrl.RouteConfiguration]: {
    dump: ConfigDumpType.Routes,
    list: 'dynamic_route_configs',
    item: (_n, version, body) => ({ version_info: version, route_config: { '@type': TypeUrl.RouteConfiguration, ...body } }),
  },
};

/**
 * `/debug/config_dump?proxyID=`: what the proxy was sent, in the shape of Envoy's admin
 * config dump (clusters, endpoints, listeners, routes), field names as in the protos.
 */
export function configDump(connection: XdsConnection): unknown {
  const configs: unknown[] = [];
  for (const typeUrl of [TypeUrl.Cluster, TypeUrl.ClusterLoadAssignment, TypeUrl.Listener, TypeUrl.RouteConfiguration] as DumpedTypeUrl[]) {
    const w = connection.watched.get(typeUrl);
    const t = DUMP_TYPES[typeUrl];
    const items: object[] = [];
    for (const [name, body] of [...(w?.sent ?? new Map<string, Buffer>()).entries()].sort(([a], [b]) => a.localeCompare(b))) {
      if (markedVersion(body) !== undefined) continue; // known only by version (delta reconnect)
      items.push(t.item(name, w!.versionSent, decodeMessage(typeUrl, body)));
    }
    configs.push({ '@type': t.dump, [t.list]: items });
  }
  return { configs };
}

/** Finds a proxy's connection by full ID or by its `<pod>.<namespace>` part. */
export function findConnection(connections: readonly XdsConnection[], proxyId: string): XdsConnection | undefined {
  return connections.find((c) => c.proxy.id === proxyId) ?? connections.find((c) => c.proxy.id.split('~')[2] === proxyId);
}
