/**
 * The agent's NDS client: its own state-of-the-world ADS stream to the daemon, subscribed to
 * the name table only, feeding each table to the DNS proxy. Separate from the proxy's xDS
 * stream, since the name table is the agent's whichever proxy (Envoy or the built-in one)
 * runs. A table the callback throws on is NACKed and the previous one stays.
 */
import * as grpc from '@grpc/grpc-js';
import type { NameInfo, NameTable } from '../../generators/nds/name-table';
import type { AdsNode } from '../../proxy/xds/ads-client';
import { decodeMessage, encodeMessage } from '../../xds/protos';
import { jsonToValue } from '../../xds/struct';
import { TypeUrl } from '../../xds/type-urls';
import type { DnsLog } from './server';

const ADS_METHOD = '/envoy.service.discovery.v3.AggregatedDiscoveryService/StreamAggregatedResources';
const REQUEST = 'type.googleapis.com/envoy.service.discovery.v3.DiscoveryRequest';
const RESPONSE = 'type.googleapis.com/envoy.service.discovery.v3.DiscoveryResponse';

type Decoded = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

export interface NameTableClientOptions {
  /** `host:port` of the daemon's xDS server (ProxyConfig discoveryAddress). */
  address: string;
  /** The agent's node: its metadata must carry DNS_CAPTURE or ENABLE_DNS_SERVER = true. */
  node: AdsNode;
  credentials?: grpc.ChannelCredentials;
  /** First reconnect delay; doubles up to 30 s. */
  retryDelayMs?: number;
  /** Called with every table the daemon sends; throwing rejects it (NACK). */
  onTable(table: NameTable): void;
  log?: DnsLog;
}

export class NameTableClient {
  private client?: grpc.Client;
  private call?: grpc.ClientDuplexStream<object, Decoded>;
  private stopped = false;
  private retryTimer?: NodeJS.Timeout;
  private retryDelay: number;
  /** Version and nonce of the last table applied, sent again on a new stream. */
  private version = '';
  private tables = 0;
  private isConnected = false;
  private readonly log: DnsLog;

  constructor(private readonly options: NameTableClientOptions) {
    this.retryDelay = options.retryDelayMs ?? 500;
    this.log = options.log ?? (() => undefined);
  }

  start(): void {
    this.client = new grpc.Client(this.options.address, this.options.credentials ?? grpc.credentials.createInsecure());
    this.open();
  }

  stop(): void {
    this.stopped = true;
    clearTimeout(this.retryTimer);
    this.call?.cancel();
    this.client?.close();
  }

  /** Whether the stream to the daemon is up. */
  connected(): boolean {
    return this.isConnected;
  }

  /** How many tables were applied so far. */
  received(): number {
    return this.tables;
  }

  private open(): void {
    if (this.stopped || !this.client) return;
    const call = this.client.makeBidiStreamRequest(
      ADS_METHOD,
      (o: object) => encodeMessage(REQUEST, o),
      (b: Buffer) => decodeMessage(RESPONSE, b) as Decoded,
    );
    this.call = call;
    call.on('metadata', () => {
      this.isConnected = true;
      this.retryDelay = this.options.retryDelayMs ?? 500;
    });
    call.on('data', (response: Decoded) => this.onResponse(call, response));
    call.on('error', (e: grpc.ServiceError) => {
      if (!this.stopped) this.log('warn', `name table stream to ${this.options.address} failed: ${e.details || e.message}; retrying in ${this.retryDelay} ms`);
    });
    call.on('close', () => {
      if (this.call !== call) return;
      this.call = undefined;
      this.isConnected = false;
      if (this.stopped) return;
      this.retryTimer = setTimeout(() => this.open(), this.retryDelay);
      this.retryDelay = Math.min(this.retryDelay * 2, 30_000);
    });
    // `*`: the one table the daemon has for this proxy, whatever its name.
    call.write({ type_url: TypeUrl.NameTable, version_info: this.version, response_nonce: '', resource_names: ['*'], node: this.nodeMessage() });
  }

  private onResponse(call: grpc.ClientDuplexStream<object, Decoded>, response: Decoded): void {
    this.isConnected = true;
    if (response.type_url !== TypeUrl.NameTable) return;
    const resources = (response.resources ?? []) as Decoded[];
    let error: string | undefined;
    try {
      if (resources.length === 0) {
        this.log('warn', 'the daemon sent no name table: is DNS_CAPTURE or ENABLE_DNS_SERVER true in the node metadata (MESH_META_DNS_CAPTURE, MESH_META_ENABLE_DNS_SERVER)?');
      }
      this.options.onTable(resources.length > 0 ? nameTableOf(resources[0]) : { table: {} });
      this.version = String(response.version_info ?? '');
      this.tables += 1;
    } catch (e) {
      error = e instanceof Error ? e.message : String(e);
      this.log('warn', `rejected name table version ${response.version_info}: ${error}`);
    }
    if (this.call !== call) return;
    const request: Record<string, unknown> = { type_url: TypeUrl.NameTable, version_info: this.version, response_nonce: String(response.nonce ?? ''), resource_names: ['*'] };
    if (error) request.error_detail = { code: grpc.status.INVALID_ARGUMENT, message: error };
    call.write(request);
  }

  private nodeMessage(): Record<string, unknown> {
    const fields: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(this.options.node.metadata)) fields[k] = jsonToValue(v);
    return { id: this.options.node.id, cluster: this.options.node.cluster, metadata: { fields }, user_agent_name: 'mesh-agent-dns' };
  }
}

/** A decoded NameTable resource (proto3 JSON: empty fields absent) in full. */
export function nameTableOf(resource: Decoded): NameTable {
  if (resource['@type'] !== undefined && resource['@type'] !== TypeUrl.NameTable) {
    throw new Error(`expected a ${TypeUrl.NameTable}, got ${resource['@type']}`);
  }
  const table: Record<string, NameInfo> = {};
  for (const [host, raw] of Object.entries((resource.table ?? {}) as Record<string, Decoded>)) {
    table[host] = {
      ips: [...(raw.ips ?? [])].map(String),
      registry: String(raw.registry ?? ''),
      shortname: String(raw.shortname ?? ''),
      namespace: String(raw.namespace ?? ''),
      alt_hosts: [...(raw.alt_hosts ?? [])].map(String),
    };
  }
  return { table };
}
