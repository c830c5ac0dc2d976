import { decodeMessage, loadMoreEnvoyProtos } from '../envoy/protos';
import { structToJson } from '../envoy/struct';
import type { RawDiscoveryResponse } from './debug-client';

/**
 * `meshctl proxy-status` for every proxy: the daemons' answers to `mesh.io/debug/syncz` in
 * proto3 JSON (as `-o json|yaml` print them), and the incumbent's status table over them.
 */

export const DEBUG_SYNCZ_TYPE = 'mesh.io/debug/syncz';
const CLIENT_CONFIG = 'envoy.service.status.v3.ClientConfig';

export type Json = null | boolean | number | string | Json[] | { [key: string]: Json };
export type JsonObject = { [key: string]: Json };

/** The syncz response in proto3 JSON: ClientConfig resources decoded, other resources named by type only. */
export function synczJson(r: RawDiscoveryResponse): JsonObject {
  loadMoreEnvoyProtos(['envoy/service/status/v3/csds.proto']);
  const out: JsonObject = {};
  if (r.versionInfo) out.versionInfo = r.versionInfo;
  if (r.resources.length > 0) out.resources = r.resources.map((a) => clientConfigJson(a.typeUrl, a.value));
  if (r.typeUrl) out.typeUrl = r.typeUrl;
  if (r.nonce) out.nonce = r.nonce;
  if (r.controlPlane !== undefined) out.controlPlane = r.controlPlane ? { identifier: r.controlPlane } : {};
  return out;
}

function clientConfigJson(typeUrl: string, value: Buffer): JsonObject {
  if (typeUrl.slice(typeUrl.lastIndexOf('/') + 1) !== CLIENT_CONFIG) return { '@type': typeUrl };
  const c = decodeMessage(CLIENT_CONFIG, value) as Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any
  const out: JsonObject = { '@type': typeUrl };
  if (c.node) {
    const node: JsonObject = {};
    if (c.node.id) node.id = c.node.id;
    if (c.node.cluster) node.cluster = c.node.cluster;
    if (c.node.metadata) node.metadata = structToJson(c.node.metadata) as JsonObject;
    out.node = node;
  }
  const generic = (c.generic_xds_configs ?? []) as Array<Record<string, any>>; // eslint-disable-line @typescript-eslint/no-explicit-any
  if (generic.length > 0) {
    out.genericXdsConfigs = generic.map((g) => {
      const o: JsonObject = {};
      if (g.type_url) o.typeUrl = g.type_url;
      if (g.name) o.name = g.name;
      if (g.version_info) o.versionInfo = g.version_info;
      if (g.config_status && g.config_status !== 'UNKNOWN') o.configStatus = g.config_status;
      if (g.client_status && g.client_status !== 'UNKNOWN') o.clientStatus = g.client_status;
      if (g.is_static_resource) o.isStaticResource = true;
      return o;
    });
  }
  return out;
}

/** Keeps only the proxies whose node metadata NAMESPACE is `namespace`. */
export function filterNamespace(response: JsonObject, namespace: string): JsonObject {
  const resources = (response.resources ?? []) as JsonObject[];
  const kept = resources.filter((r) => ((r.node as JsonObject | undefined)?.metadata as JsonObject | undefined)?.NAMESPACE === namespace);
  const out = { ...response };
  if (kept.length > 0) out.resources = kept;
  else delete out.resources;
  return out;
}

/** The control-plane instance an identifier names: its `ID` when it is the incumbent's JSON, else the identifier. */
export function instanceId(identifier: string | undefined): string {
  const text = identifier ?? '';
  try {
    const parsed = JSON.parse(text) as { ID?: unknown };
    if (parsed && typeof parsed.ID === 'string') return parsed.ID;
  } catch {
    // not JSON: the identifier itself
  }
  return text;
}

/** The instance of a syncz response in proto3 JSON. */
export function responseInstance(response: JsonObject): string {
  return instanceId(((response.controlPlane as JsonObject | undefined)?.identifier as string | undefined) ?? '');
}

/** Short names of the xDS types, in the order of the table. */
const SHORT_NAMES: Array<[string, string]> = [
  ['type.googleapis.com/envoy.config.cluster.v3.Cluster', 'CDS'],
  ['type.googleapis.com/envoy.config.listener.v3.Listener', 'LDS'],
  ['type.googleapis.com/envoy.config.endpoint.v3.ClusterLoadAssignment', 'EDS'],
  ['type.googleapis.com/envoy.config.route.v3.RouteConfiguration', 'RDS'],
  ['type.googleapis.com/envoy.config.core.v3.TypedExtensionConfig', 'ECDS'],
];

function shortName(typeUrl: string): string {
  return SHORT_NAMES.find(([t]) => t === typeUrl)?.[1] ?? typeUrl.slice(typeUrl.lastIndexOf('.') + 1);
}

/** Column-aligned: left-aligned, each column as wide as its widest cell plus `gap`, the last one unpadded. */
export function layout(rows: string[][], gap = 5): string {
  const widths: number[] = [];
  for (const row of rows) row.forEach((cell, i) => (widths[i] = Math.max(widths[i] ?? 0, cell.length)));
  return rows.map((row) => row.map((cell, i) => (i === row.length - 1 ? cell : cell.padEnd(widths[i] + gap))).join('') + '\n').join('');
}

/** The status table over every instance's response: one row per proxy, sorted by proxy ID. */
export function statusTable(responses: readonly JsonObject[], verbosity = 0): string {
  const rows: Array<{ id: string; cells: string[] }> = [];
  for (const response of responses) {
    const meshd = responseInstance(response);
    for (const r of (response.resources ?? []) as JsonObject[]) {
      const node = (r.node ?? {}) as JsonObject;
      const meta = (node.metadata ?? {}) as JsonObject;
      const id = String(node.id ?? '');
      const cluster = String(meta.CLUSTER_ID ?? '');
      const version = String(meta.MESH_VERSION ?? '');
      const status = new Map<string, string>();
      for (const g of (r.genericXdsConfigs ?? []) as JsonObject[]) status.set(String(g.typeUrl ?? ''), String(g.configStatus ?? 'UNKNOWN'));
      if (verbosity > 0) {
        const perType = SHORT_NAMES.map(([t]) => status.get(t) ?? 'NOT_SENT');
        rows.push({ id, cells: [id, cluster, ...perType, meshd, version] });
      } else {
        const known = SHORT_NAMES.map(([t]) => t).filter((t) => status.has(t));
        const others = [...status.keys()].filter((t) => !SHORT_NAMES.some(([k]) => k === t));
        const subscribed = [...known, ...others].filter((t) => status.get(t) !== 'UNKNOWN').map(shortName);
        rows.push({ id, cells: [id, cluster, meshd, version, subscribed.length > 0 ? `${subscribed.length} (${subscribed.join(',')})` : '0'] });
      }
    }
  }
  rows.sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
  const header = verbosity > 0 ? ['NAME', 'CLUSTER', ...SHORT_NAMES.map(([, s]) => s), 'MESHD', 'VERSION'] : ['NAME', 'CLUSTER', 'MESHD', 'VERSION', 'SUBSCRIBED TYPES'];
  return layout([header, ...rows.map((r) => r.cells)]);
}
