/**
 * The data plane's xDS client: one stream to the daemon (or the agent's xDS proxy) for the
 * built-in proxy's ADS, the agent's name table and the proxy's SDS, in state-of-the-world or
 * delta form. Each response is handed to `apply` as the full set of resources of its type;
 * success is ACKed, an exception NACKed, so the previous config keeps serving.
 *
 * It never gives up: however a stream ends (an error, a status, a close, a keepalive timeout,
 * a daemon that never answers), the client opens a new one after a jittered exponential
 * backoff, on a fresh channel (grpc-js channels back off on their own for up to two minutes),
 * and subscribes again with what it holds: versions and names in state of the world, the
 * versions of every resource in delta (`initial_resource_versions`). Meanwhile the consumer
 * keeps serving its last good config.
 */
import type * as grpc from '@grpc/grpc-js';
import { grpcLibrary } from '../../shared/grpc-library';
import { Backoff, BackoffOptions } from '../../shared/backoff';
import { decodeMessage, encodeMessage } from '../../envoy/protos';
import { jsonToValue } from '../../envoy/struct';
import { TypeUrl } from '../../envoy/type-urls';

export type Decoded = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

export interface AdsNode {
  id: string;
  cluster: string;
  /** Node metadata as plain JSON (strings in practice). */
  metadata: Record<string, unknown>;
}

/** Resources of one type by name, each the decoded message (without the Any wrapper). */
export type ResourceMap = Map<string, Decoded>;

export type XdsService = 'ads' | 'sds';
export type XdsProtocol = 'sotw' | 'delta';

const METHOD: Record<XdsService, Record<XdsProtocol, string>> = {
  ads: {
    sotw: '/envoy.service.discovery.v3.AggregatedDiscoveryService/StreamAggregatedResources',
    delta: '/envoy.service.discovery.v3.AggregatedDiscoveryService/DeltaAggregatedResources',
  },
  sds: {
    sotw: '/envoy.service.secret.v3.SecretDiscoveryService/StreamSecrets',
    delta: '/envoy.service.secret.v3.SecretDiscoveryService/DeltaSecrets',
  },
};
const MESSAGE: Record<XdsProtocol, { request: string; response: string }> = {
  sotw: { request: 'envoy.service.discovery.v3.DiscoveryRequest', response: 'envoy.service.discovery.v3.DiscoveryResponse' },
  delta: { request: 'envoy.service.discovery.v3.DeltaDiscoveryRequest', response: 'envoy.service.discovery.v3.DeltaDiscoveryResponse' },
};

/** Types in the order Envoy asks for them: clusters before listeners, then what they name. */
const PROXY_WILDCARD_TYPES = [TypeUrl.Cluster, TypeUrl.Listener] as const;

/** The schedule of new attempts: quick at first, never more than a few seconds apart. */
export const DEFAULT_RECONNECT_BACKOFF: BackoffOptions = { initialMs: 500, maxMs: 2000, multiplier: 2, jitter: 0.2 };
const STILL_DISCONNECTED_LOG_MS = 30_000;
const ANSWERED_RETRY_JITTER_MS = 100;

export type XdsLogLevel = 'debug' | 'info' | 'warn' | 'error';

export interface XdsClientOptions {
  /** `host:port` of the daemon, or `unix:<path>` of the agent's xDS proxy or SDS server. */
  address: string;
  node: AdsNode;
  /** Asked for on every new channel, so a renewed certificate is used. Default: plain text. */
  credentials?: () => grpc.ChannelCredentials;
  /** Channel options, e.g. keepalive (`grpc.keepalive_time_ms`) or the name the server certificate is checked against. */
  channelOptions?: grpc.ChannelOptions;
  /** Default `ads`. */
  service?: XdsService;
  /** Default `sotw`. */
  protocol?: XdsProtocol;
  /** Types asked for with no names on every new stream; default clusters then listeners (a proxy). */
  wildcardTypes?: readonly string[];
  /** `node.user_agent_name`. */
  userAgent?: string;
  /** What logs call the stream, e.g. `xDS` or `SDS`. */
  label?: string;
  /** Reconnect schedule; default DEFAULT_RECONNECT_BACKOFF. */
  backoff?: BackoffOptions;
  now?: () => number;
}

/** What the client tells about its connection (the agent's metrics listen). */
export interface XdsConnectionEvents {
  /** The daemon answered on a new stream; `downMs` is how long there was none (0 the first time). */
  connected?(downMs: number): void;
  /** A stream that had been answered ended. */
  disconnected?(reason: string): void;
  /** A stream ended before the daemon answered on it. */
  attemptFailed?(reason: string): void;
}

export interface XdsClientHandlers extends XdsConnectionEvents {
  /** Applies the full set of resources of a type; throwing NACKs the response. */
  apply(typeUrl: string, resources: ResourceMap): Promise<void> | void;
  log(level: XdsLogLevel, message: string): void;
}

interface TypeState {
  /** Names subscribed to (undefined: wildcard). */
  names?: string[];
  /** State of the world: the version last applied. */
  version: string;
  nonce: string;
  /** Delta: what is held, by name, with the version the daemon gave it. */
  held: Map<string, { version: string; message: Decoded }>;
}

type Call = grpc.ClientDuplexStream<object, Decoded>;

export class XdsClient {
  private channel?: grpc.Client;
  private call?: Call;
  private readonly state = new Map<string, TypeState>();
  private readonly backoff: Backoff;
  private readonly protocol: XdsProtocol;
  private readonly label: string;
  private readonly now: () => number;
  private sentNode = false;
  private started = false;
  private stopped = false;
  private retryTimer?: NodeJS.Timeout;
  /** Responses are applied one at a time, in arrival order. */
  private queue: Promise<void> = Promise.resolve();
  private answered = false;
  /** Since when no stream has been answered; undefined while one is. */
  private downSince: number;
  private everConnected = false;
  private lastOutageLog = 0;
  private lastError = '';

  constructor(
    private readonly options: XdsClientOptions,
    private readonly handlers: XdsClientHandlers,
  ) {
    this.protocol = options.protocol ?? 'sotw';
    this.label = options.label ?? 'xDS';
    this.now = options.now ?? Date.now;
    this.backoff = new Backoff(options.backoff ?? DEFAULT_RECONNECT_BACKOFF);
    this.downSince = this.now();
  }

  start(): void {
    if (this.started) throw new Error(`${this.label} client already started`);
    this.started = true;
    this.downSince = this.now();
    this.open();
  }

  /** Whether the current stream has been answered by the daemon. */
  get connected(): boolean {
    return this.answered;
  }

  /** How long no stream has been answered (0 while one is). */
  disconnectedForMs(): number {
    return this.answered ? 0 : Math.max(0, this.now() - this.downSince);
  }

  /** Changes the names subscribed to (e.g. EDS or RDS); sent only when they differ. */
  subscribe(typeUrl: string, names: readonly string[]): void {
    const sorted = [...new Set(names)].sort();
    const current = this.state.get(typeUrl);
    if (current?.names && current.names.join('\n') === sorted.join('\n')) return;
    const previous = current?.names ?? [];
    const next: TypeState = { names: sorted, version: current?.version ?? '', nonce: current?.nonce ?? '', held: current?.held ?? new Map() };
    for (const name of next.held.keys()) if (!sorted.includes(name)) next.held.delete(name);
    this.state.set(typeUrl, next);
    if (!this.call) return;
    if (this.protocol === 'sotw') {
      this.send(this.sotwRequest(typeUrl, next));
    } else {
      const wanted = new Set(sorted);
      const had = new Set(previous);
      this.send({
        type_url: typeUrl,
        resource_names_subscribe: sorted.filter((n) => !had.has(n)),
        resource_names_unsubscribe: previous.filter((n) => !wanted.has(n)),
      });
    }
  }

  stop(): void {
    this.stopped = true;
    clearTimeout(this.retryTimer);
    const call = this.call;
    this.call = undefined;
    call?.cancel();
    this.channel?.close();
  }

  private open(): void {
    if (this.stopped) return;
    this.channel?.close();
    this.channel = undefined;
    this.answered = false;
    this.sentNode = false;
    let call: Call;
    try {
      const credentials = this.options.credentials?.() ?? grpcLibrary().credentials.createInsecure();
      this.channel = new (grpcLibrary().Client)(this.options.address, credentials, { 'grpc.max_receive_message_length': -1, ...this.options.channelOptions });
      const messages = MESSAGE[this.protocol];
      call = this.channel.makeBidiStreamRequest(
        METHOD[this.options.service ?? 'ads'][this.protocol],
        (o: object) => encodeMessage(messages.request, o),
        (b: Buffer) => decodeMessage(messages.response, b) as Decoded,
      );
    } catch (err) {
      this.retryLater(`cannot open a stream: ${(err as Error).message}`, false);
      return;
    }
    this.call = call;
    let ended = false;
    const end = (reason: string) => {
      if (ended) return;
      ended = true;
      this.onStreamEnd(call, reason);
    };
    // grpc-js ends a client's bidi call with `status` (and `error` unless OK); `close` only
    // when both sides have ended. Whichever comes first ends the stream here, once.
    call.on('status', (s: grpc.StatusObject) => end(s.code === grpcLibrary().status.OK ? 'the daemon closed the stream' : describe(s.code, s.details)));
    call.on('error', (e: grpc.ServiceError) => end(describe(e.code, e.details || e.message)));
    call.on('close', () => end('the stream closed'));
    call.on('data', (response: Decoded) => {
      if (this.call !== call) return;
      if (!this.answered) this.onAnswered();
      this.queue = this.queue.then(() => (this.protocol === 'sotw' ? this.onSotwResponse(call, response) : this.onDeltaResponse(call, response)));
    });
    for (const typeUrl of this.options.wildcardTypes ?? PROXY_WILDCARD_TYPES) {
      if (!this.state.has(typeUrl)) this.state.set(typeUrl, { version: '', nonce: '', held: new Map() });
    }
    // Wildcards first (clusters before listeners), then the named subscriptions they led to.
    const order = [...this.state].sort(([, a], [, b]) => Number(a.names !== undefined) - Number(b.names !== undefined));
    for (const [typeUrl, s] of order) this.send(this.resumeRequest(typeUrl, s));
  }

  /** The first request of a type on a new stream: what this client already holds. */
  private resumeRequest(typeUrl: string, s: TypeState): Record<string, unknown> {
    if (this.protocol === 'sotw') return this.sotwRequest(typeUrl, { ...s, nonce: '' });
    const initial: Record<string, string> = {};
    for (const [name, held] of s.held) initial[name] = held.version;
    return { type_url: typeUrl, resource_names_subscribe: s.names ?? ['*'], initial_resource_versions: initial };
  }

  private sotwRequest(typeUrl: string, s: TypeState): Record<string, unknown> {
    return { type_url: typeUrl, version_info: s.version, response_nonce: s.nonce, resource_names: s.names ?? [] };
  }

  private onAnswered(): void {
    this.answered = true;
    this.backoff.reset();
    const downMs = this.everConnected ? this.now() - this.downSince : 0;
    if (this.everConnected) {
      this.handlers.log('info', `${this.label} stream to ${this.options.address} re-established after ${seconds(downMs)} disconnected`);
    } else {
      this.handlers.log('info', `${this.label} stream to ${this.options.address} established`);
    }
    this.everConnected = true;
    this.lastOutageLog = 0;
    this.handlers.connected?.(downMs);
  }

  private onStreamEnd(call: Call, reason: string): void {
    if (this.call !== call) return;
    this.call = undefined;
    if (this.stopped) return;
    const wasAnswered = this.answered;
    this.answered = false;
    if (wasAnswered) {
      this.downSince = this.now();
      this.handlers.disconnected?.(reason);
    } else {
      this.handlers.attemptFailed?.(reason);
    }
    this.retryLater(reason, wasAnswered);
  }

  private retryLater(reason: string, wasAnswered: boolean): void {
    if (this.stopped) return;
    // A stream that was answered is retried at once (but for a little jitter): the daemon, or
    // the agent's xDS proxy that ended it because the daemon is back, is likely there.
    const delay = wasAnswered ? Math.round(Math.random() * ANSWERED_RETRY_JITTER_MS) : this.backoff.next();
    const now = this.now();
    const keeps = this.everConnected ? 'serving the last good config meanwhile' : 'no config received yet';
    if (wasAnswered) {
      this.handlers.log('warn', `${this.label} stream to ${this.options.address} ended (${reason}); ${keeps}; reconnecting in ${delay} ms`);
      this.lastOutageLog = now;
    } else if (this.lastOutageLog === 0 || now - this.lastOutageLog >= STILL_DISCONNECTED_LOG_MS) {
      const down = now - this.downSince;
      this.handlers.log('warn', `${this.label} stream to ${this.options.address} unavailable for ${seconds(down)} (${reason}); ${keeps}; retrying in ${delay} ms`);
      this.lastOutageLog = now;
    } else if (reason !== this.lastError) {
      this.handlers.log('debug', `${this.label} stream to ${this.options.address}: ${reason}; retrying in ${delay} ms`);
    }
    this.lastError = reason;
    this.retryTimer = setTimeout(() => this.open(), delay);
    this.retryTimer.unref?.();
  }

  private async onSotwResponse(call: Call, response: Decoded): Promise<void> {
    const typeUrl = String(response.type_url);
    const state = this.stateOf(typeUrl);
    const resources: ResourceMap = new Map();
    for (const any of (response.resources ?? []) as Decoded[]) {
      const { '@type': _type, ...message } = any;
      resources.set(String(message.name ?? message.cluster_name ?? ''), message);
    }
    const error = await this.applyOrExplain(typeUrl, String(response.version_info), resources);
    if (this.call !== call) return; // the stream was replaced while applying
    const current = this.stateOf(typeUrl);
    const next: TypeState = { ...current, version: error ? state.version : String(response.version_info), nonce: String(response.nonce) };
    this.state.set(typeUrl, next);
    this.send(this.sotwRequest(typeUrl, next), error);
  }

  private async onDeltaResponse(call: Call, response: Decoded): Promise<void> {
    const typeUrl = String(response.type_url);
    const held = new Map(this.stateOf(typeUrl).held);
    for (const entry of (response.resources ?? []) as Decoded[]) {
      if (!entry.resource) continue;
      const { '@type': _type, ...message } = entry.resource as Decoded;
      held.set(String(entry.name), { version: String(entry.version ?? ''), message });
    }
    for (const name of (response.removed_resources ?? []) as string[]) held.delete(String(name));
    const resources: ResourceMap = new Map([...held].map(([name, r]) => [name, r.message]));
    const error = await this.applyOrExplain(typeUrl, String(response.system_version_info ?? response.nonce), resources);
    if (this.call !== call) return;
    const current = this.stateOf(typeUrl);
    if (!error) {
      // A subscription dropped while applying stays dropped.
      if (current.names) for (const name of held.keys()) if (!current.names.includes(name)) held.delete(name);
      current.held = held;
    }
    current.nonce = String(response.nonce);
    this.send({ type_url: typeUrl, response_nonce: String(response.nonce) }, error);
  }

  private async applyOrExplain(typeUrl: string, version: string, resources: ResourceMap): Promise<string | undefined> {
    try {
      await this.handlers.apply(typeUrl, resources);
      return undefined;
    } catch (e) {
      const error = e instanceof Error ? e.message : String(e);
      this.handlers.log('warn', `rejected ${shortType(typeUrl)} version ${version}: ${error}`);
      return error;
    }
  }

  private stateOf(typeUrl: string): TypeState {
    let s = this.state.get(typeUrl);
    if (!s) {
      s = { version: '', nonce: '', held: new Map() };
      this.state.set(typeUrl, s);
    }
    return s;
  }

  private send(request: Record<string, unknown>, error?: string): void {
    if (error) request.error_detail = { code: grpcLibrary().status.INVALID_ARGUMENT, message: error };
    if (!this.sentNode) {
      const fields: Record<string, unknown> = {};
      for (const [k, v] of Object.entries(this.options.node.metadata)) fields[k] = jsonToValue(v);
      request.node = { id: this.options.node.id, cluster: this.options.node.cluster, metadata: { fields }, user_agent_name: this.options.userAgent ?? 'mesh-builtin-proxy' };
      this.sentNode = true;
    }
    this.call?.write(request);
  }
}

function describe(code: number, details: string): string {
  return `${grpcLibrary().status[code] ?? code}: ${details}`;
}

function seconds(ms: number): string {
  return `${(ms / 1000).toFixed(1)} s`;
}

function shortType(typeUrl: string): string {
  return typeUrl.slice(typeUrl.lastIndexOf('.') + 1);
}
