import { XdsConnection } from '../xds/connection';
import { DebugResource } from '../xds/debug-requests';
import { proxyConnections } from '../xds/syncz';
import { decodeMessage, encodeMessage } from '../envoy/protos';
import { SHORT_TYPE, TypeUrl, XdsTypeUrl } from '../envoy/type-urls';
import { ConfigDumpType } from '../envoy/well-known';
import { XdsGenerator } from '../model/generator';
import { PushContext } from '../model/push-context';

/** `/debug/syncz`: each connected proxy and, per type, what was sent and what it acknowledged. */
export function syncz(connections: readonly XdsConnection[]): unknown[] {
  return proxyConnections(connections).map((c) => ({
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

/** One section of the dump: the admin message, its list field, and how an entry wraps a resource. */
interface DumpSection {
  typeUrl: XdsTypeUrl;
  dump: string;
  list: string;
  entry: (name: string, version: string, resource: { type_url: string; value: Buffer }) => object;
}

/** In the order of the incumbent's dump: clusters, listeners, routes, then endpoints. */
const SECTIONS: readonly DumpSection[] = [
  { typeUrl: TypeUrl.Cluster, dump: ConfigDumpType.Clusters, list: 'dynamic_active_clusters', entry: (_n, version_info, cluster) => ({ version_info, cluster }) },
  { typeUrl: TypeUrl.Listener, dump: ConfigDumpType.Listeners, list: 'dynamic_listeners', entry: (name, version_info, listener) => ({ name, active_state: { version_info, listener } }) },
  { typeUrl: TypeUrl.RouteConfiguration, dump: ConfigDumpType.Routes, list: 'dynamic_route_configs', entry: (_n, version_info, route_config) => ({ version_info, route_config }) },
  { typeUrl: TypeUrl.ClusterLoadAssignment, dump: ConfigDumpType.Endpoints, list: 'dynamic_endpoint_configs', entry: (_n, version_info, endpoint_config) => ({ version_info, endpoint_config }) },
];

/**
 * What the daemon would send `connection`'s proxy now, as the sections of an Envoy admin
 * config dump (`envoy.admin.v3.ClustersConfigDump`...), each encoded: generated from `push`
 * for the names the proxy subscribes to. Clusters and listeners are generated even when the
 * proxy has not asked for them yet (all of them, as a wildcard would get); routes and
 * endpoints only for the names it asked.
 */
export function configDumpSections(connection: XdsConnection, push: PushContext, generator: XdsGenerator): DebugResource[] {
  return SECTIONS.map((section) => {
    const watch = connection.watched.get(section.typeUrl);
    const wildcardType = section.typeUrl === TypeUrl.Cluster || section.typeUrl === TypeUrl.Listener;
    const names = watch ? (watch.names ? [...watch.names].sort() : undefined) : wildcardType ? undefined : [];
    const resources = names && names.length === 0 ? [] : generator.generate({ proxy: connection.proxy, push, typeUrl: section.typeUrl, names });
    const entries = [...resources]
      .sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0))
      .map((r) => section.entry(r.name, push.version, { type_url: section.typeUrl, value: r.body }));
    return { name: section.dump, typeUrl: section.dump, value: encodeMessage(section.dump, { version_info: push.version, [section.list]: entries }) };
  });
}

/** `/debug/config_dump?proxyID=`: the sections in the proxy's JSON layout (snake_case, `@type` on each). */
export function configDumpJson(sections: readonly DebugResource[]): unknown {
  return { configs: sections.map((s) => ({ '@type': s.typeUrl, ...decodeMessage(s.typeUrl, s.value) })) };
}

/** Finds a proxy's connection by full ID or by its `<pod>.<namespace>` part (debug clients are no proxies). */
export function findConnection(connections: readonly XdsConnection[], proxyId: string): XdsConnection | undefined {
  const proxies = proxyConnections(connections);
  return proxies.find((c) => c.proxy.id === proxyId) ?? proxies.find((c) => c.proxy.id.split('~')[2] === proxyId);
}
