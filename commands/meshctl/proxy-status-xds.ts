import * as fs from 'node:fs';
import * as path from 'node:path';
import * as grpc from '@grpc/grpc-js';
import { decodeMessage, encodeMessage, loadMoreEnvoyProtos } from '../../src/modules/envoy/protos';
import { structToJson } from '../../src/modules/envoy/struct';

/**
 * `meshctl proxy-status` over xDS: the syncz debug request on an ADS stream, the responses in
 * proto3 JSON (as received), and the status table of the incumbent.
 */

export const DEBUG_SYNCZ_TYPE = 'mesh.io/debug/syncz';
const ADS_METHOD = '/envoy.service.discovery.v3.AggregatedDiscoveryService/StreamAggregatedResources';
const REQUEST = 'envoy.service.discovery.v3.DiscoveryRequest';
const RESPONSE = 'envoy.service.discovery.v3.DiscoveryResponse';
const CLIENT_CONFIG = 'envoy.service.status.v3.ClientConfig';

export type Json = null | boolean | number | string | Json[] | { [key: string]: Json };
export type JsonObject = { [key: string]: Json };

export interface XdsTarget {
  address: string;
  plaintext: boolean;
  insecure: boolean;
  authority?: string;
  certDir?: string;
  timeoutMs: number;
}

function credentials(t: XdsTarget): grpc.ChannelCredentials {
  if (t.plaintext) return grpc.credentials.createInsecure();
  const read = (name: string) => (t.certDir ? fs.readFileSync(path.join(t.certDir, name)) : undefined);
  const verify: grpc.VerifyOptions & { rejectUnauthorized?: boolean } = t.insecure ? { rejectUnauthorized: false, checkServerIdentity: () => undefined } : {};
  return grpc.credentials.createSsl(read('root-cert.pem') ?? null, read('key.pem') ?? null, read('cert-chain.pem') ?? null, verify);
}

/** Asks one control plane for its syncz answer; resolves with the DiscoveryResponse in proto3 JSON. */
export async function fetchSyncz(t: XdsTarget): Promise<JsonObject> {
  loadMoreEnvoyProtos(['envoy/service/status/v3/csds.proto']);
  const options: grpc.ChannelOptions = t.authority ? { 'grpc.ssl_target_name_override': t.authority, 'grpc.default_authority': t.authority } : {};
  const client = new grpc.Client(t.address, credentials(t), options);
  try {
    return await new Promise<JsonObject>((resolve, reject) => {
      const call = client.makeBidiStreamRequest(
        ADS_METHOD,
        (o: object) => encodeMessage(REQUEST, o),
        (b: Buffer) => decodeMessage(RESPONSE, b),
        new grpc.Metadata(),
        { deadline: Date.now() + t.timeoutMs },
      );
      let done = false;
      call.on('data', (r: Record<string, unknown>) => {
        if (done) return;
        done = true;
        try {
          resolve(responseJson(r));
        } catch (err) {
          reject(err);
        }
        call.cancel();
      });
      call.on('error', (e: grpc.ServiceError) => {
        if (done) return;
        done = true;
        reject(new Error(e.code === grpc.status.DEADLINE_EXCEEDED ? `no answer from ${t.address} within ${t.timeoutMs / 1000}s` : `xDS request to ${t.address} failed: ${(e.details || e.message).replace(/\s*Resolution note:.*$/s, '').trim()}`));
      });
      call.on('end', () => {
        if (done) return;
        done = true;
        reject(new Error(`${t.address} closed the stream without answering`));
      });
      call.write({
        node: { id: `sidecar~0.0.0.0~meshctl-${process.pid}.default~default.svc.cluster.local`, metadata: { fields: {} } },
        type_url: DEBUG_SYNCZ_TYPE,
        resource_names: [],
        version_info: '',
        response_nonce: '',
      });
    });
  } finally {
    client.close();
  }
}

/** The decoded (snake_case) DiscoveryResponse with ClientConfig resources, in proto3 JSON. */
function responseJson(r: Record<string, any>): JsonObject { // eslint-disable-line @typescript-eslint/no-explicit-any
  const out: JsonObject = {};
  if (r.version_info) out.versionInfo = r.version_info;
  const resources = (r.resources ?? []) as Array<Record<string, unknown>>;
  if (resources.length > 0) out.resources = resources.map(anyJson);
  if (r.canary) out.canary = true;
  if (r.type_url) out.typeUrl = r.type_url;
  if (r.nonce) out.nonce = r.nonce;
  if (r.control_plane) out.controlPlane = r.control_plane.identifier ? { identifier: r.control_plane.identifier } : {};
  return out;
}

/** One resource: decoded with our protos, an Any of a known type arrives as `@type` plus its fields. */
function anyJson(a: Record<string, any>): JsonObject { // eslint-disable-line @typescript-eslint/no-explicit-any
  const typeUrl = String(a['@type'] ?? a.type_url ?? '');
  const name = typeUrl.slice(typeUrl.lastIndexOf('/') + 1);
  if (name !== CLIENT_CONFIG) return { '@type': typeUrl };
  const c = (a['@type'] ? a : decodeMessage(CLIENT_CONFIG, Buffer.from(String(a.value ?? ''), 'base64'))) as Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any
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
export function instanceId(response: JsonObject): string {
  const identifier = ((response.controlPlane as JsonObject | undefined)?.identifier as string | undefined) ?? '';
  try {
    const parsed = JSON.parse(identifier) as { ID?: unknown };
    if (parsed && typeof parsed.ID === 'string') return parsed.ID;
  } catch {
    // not JSON: the identifier itself
  }
  return identifier;
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
    const meshd = instanceId(response);
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
