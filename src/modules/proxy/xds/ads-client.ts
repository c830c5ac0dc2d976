/**
 * The built-in proxy's ADS client (state of the world): one stream to the daemon carrying
 * CDS, EDS, LDS and RDS, as Envoy subscribes to them. Each response is handed to the
 * proxy's apply function; success is ACKed with the response's version, an exception NACKed
 * with its message and the previous version, so the proxy keeps its last good config.
 */
import * as grpc from '@grpc/grpc-js';
import { decodeMessage, encodeMessage } from '../../xds/protos';
import { jsonToValue } from '../../xds/struct';
import { TypeUrl } from '../../xds/type-urls';

const ADS_METHOD = '/envoy.service.discovery.v3.AggregatedDiscoveryService/StreamAggregatedResources';
const REQUEST = 'type.googleapis.com/envoy.service.discovery.v3.DiscoveryRequest';
const RESPONSE = 'type.googleapis.com/envoy.service.discovery.v3.DiscoveryResponse';

export type Decoded = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

export interface AdsNode {
  id: string;
  cluster: string;
  /** Node metadata as plain JSON (strings in practice). */
  metadata: Record<string, unknown>;
}

/** Resources of one response by name, each the decoded message (without the Any wrapper). */
export type ResourceMap = Map<string, Decoded>;

export interface AdsHandlers {
  /** Applies a response; throwing NACKs it. */
  apply(typeUrl: string, resources: ResourceMap): Promise<void> | void;
  log(level: 'debug' | 'info' | 'warn' | 'error', message: string): void;
}

export interface AdsClientOptions {
  /** `host:port` of the daemon's xDS server. */
  address: string;
  node: AdsNode;
  credentials?: grpc.ChannelCredentials;
  /** First reconnect delay; doubles up to 30 s. */
  retryDelayMs?: number;
  /** Types asked for with no names on every new stream; default clusters then listeners (a proxy). */
  wildcardTypes?: readonly string[];
  /** `node.user_agent_name`. */
  userAgent?: string;
}

/** Types in the order Envoy asks for them: clusters before listeners, then what they name. */
const WILDCARD_TYPES = [TypeUrl.Cluster, TypeUrl.Listener] as const;

interface TypeState {
  /** Names subscribed to (undefined: wildcard). */
  names?: string[];
  version: string;
  nonce: string;
}

export class AdsClient {
  private client?: grpc.Client;
  private call?: grpc.ClientDuplexStream<object, Decoded>;
  private readonly state = new Map<string, TypeState>();
  private sentNode = false;
  private stopped = false;
  private retryTimer?: NodeJS.Timeout;
  private retryDelay: number;
  /** Responses are applied one at a time, in arrival order. */
  private queue: Promise<void> = Promise.resolve();
  connected = false;

  constructor(
    private readonly options: AdsClientOptions,
    private readonly handlers: AdsHandlers,
  ) {
    this.retryDelay = options.retryDelayMs ?? 500;
  }

  start(): void {
    this.client = new grpc.Client(this.options.address, this.options.credentials ?? grpc.credentials.createInsecure());
    this.open();
  }

  /** Changes the names subscribed to for EDS or RDS; sent only when they differ. */
  subscribe(typeUrl: string, names: readonly string[]): void {
    const sorted = [...new Set(names)].sort();
    const current = this.state.get(typeUrl);
    if (current?.names && current.names.join('\n') === sorted.join('\n')) return;
    const next: TypeState = { names: sorted, version: current?.version ?? '', nonce: current?.nonce ?? '' };
    this.state.set(typeUrl, next);
    if (this.call) this.send(typeUrl, next);
  }

  stop(): void {
    this.stopped = true;
    clearTimeout(this.retryTimer);
    this.call?.cancel();
    this.client?.close();
  }

  private open(): void {
    if (this.stopped || !this.client) return;
    this.sentNode = false;
    const call = this.client.makeBidiStreamRequest(
      ADS_METHOD,
      (o: object) => encodeMessage(REQUEST, o),
      (b: Buffer) => decodeMessage(RESPONSE, b) as Decoded,
    );
    this.call = call;
    call.on('metadata', () => {
      this.connected = true;
      this.retryDelay = this.options.retryDelayMs ?? 500;
    });
    call.on('data', (response: Decoded) => {
      this.connected = true;
      this.queue = this.queue.then(() => this.onResponse(call, response));
    });
    call.on('error', (e: grpc.ServiceError) => {
      if (this.stopped) return;
      this.handlers.log('warn', `xDS stream to ${this.options.address} failed: ${e.details || e.message}; retrying in ${this.retryDelay} ms`);
    });
    call.on('close', () => {
      if (this.call !== call) return;
      this.call = undefined;
      this.connected = false;
      if (this.stopped) return;
      this.retryTimer = setTimeout(() => this.open(), this.retryDelay);
      this.retryDelay = Math.min(this.retryDelay * 2, 30_000);
    });
    // A new stream starts again from the versions we have, so the daemon can skip resending.
    for (const typeUrl of this.options.wildcardTypes ?? WILDCARD_TYPES) {
      const s = this.state.get(typeUrl) ?? { version: '', nonce: '' };
      this.state.set(typeUrl, s);
      this.send(typeUrl, { ...s, nonce: '' });
    }
    for (const [typeUrl, s] of this.state) if (s.names) this.send(typeUrl, { ...s, nonce: '' });
  }

  private async onResponse(call: grpc.ClientDuplexStream<object, Decoded>, response: Decoded): Promise<void> {
    const typeUrl = String(response.type_url);
    const state = this.state.get(typeUrl) ?? { version: '', nonce: '' };
    const resources: ResourceMap = new Map();
    for (const any of (response.resources ?? []) as Decoded[]) {
      const { '@type': _type, ...message } = any;
      resources.set(String(message.name ?? message.cluster_name ?? ''), message);
    }
    let error: string | undefined;
    try {
      await this.handlers.apply(typeUrl, resources);
    } catch (e) {
      error = e instanceof Error ? e.message : String(e);
      this.handlers.log('warn', `rejected ${shortType(typeUrl)} version ${response.version_info}: ${error}`);
    }
    if (this.call !== call) return; // the stream was replaced while applying
    const next: TypeState = { names: this.state.get(typeUrl)?.names ?? state.names, version: error ? state.version : String(response.version_info), nonce: String(response.nonce) };
    this.state.set(typeUrl, next);
    this.send(typeUrl, next, error);
  }

  private send(typeUrl: string, s: TypeState, error?: string): void {
    const request: Record<string, unknown> = {
      type_url: typeUrl,
      version_info: s.version,
      response_nonce: s.nonce,
      resource_names: s.names ?? [],
    };
    if (error) request.error_detail = { code: grpc.status.INVALID_ARGUMENT, message: error };
    if (!this.sentNode) {
      const fields: Record<string, unknown> = {};
      for (const [k, v] of Object.entries(this.options.node.metadata)) fields[k] = jsonToValue(v);
      request.node = { id: this.options.node.id, cluster: this.options.node.cluster, metadata: { fields }, user_agent_name: this.options.userAgent ?? 'mesh-builtin-proxy' };
      this.sentNode = true;
    }
    this.call?.write(request);
  }
}

function shortType(typeUrl: string): string {
  return typeUrl.slice(typeUrl.lastIndexOf('.') + 1);
}
