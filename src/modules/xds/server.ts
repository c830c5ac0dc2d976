import * as grpc from '@grpc/grpc-js';
import { ChangeSet, XdsGenerator, XdsResource } from '../model/generator';
import { ScopedLogger } from '../logging';
import { parseProxy, Proxy, ProxyIdError } from '../model/proxy';
import { PushContext } from '../model/push-context';
import { newWatchState, versionMarker, WatchState, XdsConnection } from './connection';
import { XdsObserver } from './observer';
import { XdsAuthError, XdsStreamAuth } from './stream-auth';
import { mergeChanges, planPush } from './push-plan';
import { changedSubscription, internNameSet } from './interning';
import { PushQueue } from './push-queue';
import { RateLimiter } from './rate-limiter';
import { structToJson } from '../envoy/struct';
import { isXdsTypeUrl, PUSH_ORDER, SHORT_TYPE, TypeUrl, XdsTypeUrl } from '../envoy/type-urls';
import { WriteBudget } from './write-budget';
import { isStateOfTheWorldType, keepRemovedResources, namesToGenerate, planDeltaResponse, planSotwResponse, ResponseScope } from './response-planner';
import {
  decodeDeltaDiscoveryRequest,
  decodeDiscoveryRequest,
  DeltaDiscoveryRequest,
  DiscoveryRequest,
  encodeDeltaDiscoveryResponse,
  encodeDiscoveryResponse,
} from '../envoy/wire';

export interface XdsServerOptions {
  /** Generators by node metadata GENERATOR; `''` serves Envoy sidecars and routers. */
  generators: ReadonlyMap<string, XdsGenerator>;
  /** MESH_DELTA_XDS: serve DeltaAggregatedResources too. */
  deltaEnabled: boolean;
  maxReceiveMessageBytes: number;
  maxConcurrentStreams: number;
  keepaliveIntervalMs: number;
  keepaliveTimeoutMs: number;
  /** Undefined = unlimited. */
  maxConnectionAgeMs?: number;
  pushConcurrency: number;
  /** Response bytes being written at once, across all streams. */
  maxBytesInFlight?: number;
  /** Responses being generated and encoded at once, across all streams. */
  maxResponsesInPreparation?: number;
  /** New streams admitted per second (PILOT_MAX_REQUESTS_PER_SECOND). */
  newStreamsPerSecond: number;
  /** Identifier sent as `control_plane.identifier`. */
  controlPlaneId: string;
  logger: ScopedLogger;
  observer: XdsObserver;
  /** The current push context; undefined until the first one is built (requests then wait). */
  currentPush: () => PushContext | undefined;
}

type Stream = grpc.ServerDuplexStream<Buffer, Buffer>;

/** One address the ADS service is served on. */
export interface XdsListener {
  host: string;
  port: number;
  credentials: grpc.ServerCredentials;
  /** Who may open streams here, and as which proxies; none = anyone (plaintext, trusted network). */
  auth?: XdsStreamAuth;
  /** Other gRPC services on the same address (the CA beside secure xDS). */
  services?: { definition: grpc.ServiceDefinition; implementation: grpc.UntypedServiceImplementation }[];
}

interface PendingPush {
  push: PushContext;
  change: ChangeSet;
  /** When the earliest change in this push happened (for convergence time). */
  changeAt: number;
  enqueuedAt: number;
}

interface ConnectionState {
  conn: XdsConnection;
  stream: Stream;
  closed: boolean;
  /** Serializes request handling and pushes on one stream. */
  chain: Promise<void>;
  pending?: PendingPush;
  scheduled: boolean;
  /** Fails the write in progress, if any (the stream closed). */
  abortWrite?: () => void;
}

/** What respond() was asked to send. */
interface ResponseToPrepare {
  state: ConnectionState;
  typeUrl: XdsTypeUrl;
  watch: WatchState;
  push: PushContext;
  scope: ResponseScope;
  requested: boolean;
  keepRemoved: boolean;
}

const ADS_SERVICE = 'envoy.service.discovery.v3.AggregatedDiscoveryService';
/** A response gRPC has not taken after this long counts in pilot_xds_write_timeout. */
const WRITE_TIMEOUT_MS = 30_000;

/**
 * The ADS server (DESIGN.md §2): speaks state-of-the-world and delta xDS, tracks versions,
 * nonces, ACKs and NACKs per proxy and type, and pushes what changed to the proxies it
 * concerns. It never builds config itself: generators do, from the push context.
 */
export class XdsServer {
  private readonly servers: grpc.Server[] = [];
  private readonly states = new Map<XdsConnection, ConnectionState>();
  private readonly queue: PushQueue;
  private readonly admission: RateLimiter;
  /** Memory bounds for thousands of streams asking at once (a connect storm). */
  private readonly budget: WriteBudget;

  constructor(private readonly options: XdsServerOptions) {
    this.queue = new PushQueue(options.pushConcurrency);
    this.admission = new RateLimiter(options.newStreamsPerSecond);
    this.budget = new WriteBudget(options.maxResponsesInPreparation, options.maxBytesInFlight);
  }

  /** Binds the plaintext `host:port` (port 0 picks one) and resolves with the bound port. */
  async start(host: string, port: number): Promise<number> {
    return this.listen({ host, port, credentials: grpc.ServerCredentials.createInsecure() });
  }

  /**
   * Serves ADS on another address, e.g. the TLS `--secureGRPCAddr` with its authenticator and
   * the CA service beside it. Resolves with the bound port.
   */
  async listen(listener: XdsListener): Promise<number> {
    const server = new grpc.Server(this.channelOptions());
    const { methods, handlers } = this.adsService(listener.auth);
    server.addService(methods, handlers);
    for (const extra of listener.services ?? []) server.addService(extra.definition, extra.implementation);
    const { host, port } = listener;
    const target = host.includes(':') ? `[${host}]:${port}` : `${host}:${port}`;
    const bound = await new Promise<number>((resolve, reject) =>
      server.bindAsync(target, listener.credentials, (err, p) => (err ? reject(err) : resolve(p))),
    );
    this.servers.push(server);
    return bound;
  }

  private channelOptions(): grpc.ServerOptions {
    const o = this.options;
    const channelOptions: grpc.ServerOptions = {
      'grpc.max_receive_message_length': o.maxReceiveMessageBytes,
      'grpc.max_send_message_length': -1,
      'grpc.max_concurrent_streams': o.maxConcurrentStreams,
      'grpc.keepalive_time_ms': o.keepaliveIntervalMs,
      'grpc.keepalive_timeout_ms': o.keepaliveTimeoutMs,
      'grpc.keepalive_permit_without_calls': 1,
    };
    if (o.maxConnectionAgeMs !== undefined && o.maxConnectionAgeMs < 2 ** 31 - 1) channelOptions['grpc.max_connection_age_ms'] = o.maxConnectionAgeMs;
    return channelOptions;
  }

  private adsService(auth: XdsStreamAuth | undefined): { methods: Record<string, grpc.MethodDefinition<Buffer, Buffer>>; handlers: grpc.UntypedServiceImplementation } {
    const passThrough = (b: Buffer) => b;
    const method = (name: string, decode: (b: Buffer) => unknown): grpc.MethodDefinition<Buffer, Buffer> => ({
      path: `/${ADS_SERVICE}/${name}`,
      requestStream: true,
      responseStream: true,
      requestSerialize: passThrough,
      requestDeserialize: decode as (b: Buffer) => Buffer,
      responseSerialize: passThrough,
      responseDeserialize: passThrough,
    });
    const methods: Record<string, grpc.MethodDefinition<Buffer, Buffer>> = { StreamAggregatedResources: method('StreamAggregatedResources', decodeDiscoveryRequest) };
    const handlers: grpc.UntypedServiceImplementation = {
      StreamAggregatedResources: (stream: Stream) => this.serveStream(stream, 'sotw', auth),
    };
    if (this.options.deltaEnabled) {
      methods.DeltaAggregatedResources = method('DeltaAggregatedResources', decodeDeltaDiscoveryRequest);
      handlers.DeltaAggregatedResources = (stream: Stream) => this.serveStream(stream, 'delta', auth);
    }
    return { methods, handlers };
  }

  /** Stops accepting streams, lets open ones finish for up to `graceMs`, then cuts them. */
  async stop(graceMs: number): Promise<void> {
    const servers = this.servers.splice(0);
    if (servers.length === 0) return;
    for (const s of this.states.values()) s.stream.end();
    await Promise.all(
      servers.map(
        (server) =>
          new Promise<void>((resolve) => {
            const timer = setTimeout(() => {
              server.forceShutdown();
              resolve();
            }, graceMs);
            server.tryShutdown(() => {
              clearTimeout(timer);
              resolve();
            });
          }),
      ),
    );
  }

  connections(): XdsConnection[] {
    return [...this.states.keys()];
  }

  /** Queues a push of `push` to every connected proxy the change concerns. */
  pushAll(push: PushContext, change: ChangeSet, changeAt: number): void {
    for (const state of this.states.values()) this.enqueue(state, push, change, changeAt);
  }

  private enqueue(state: ConnectionState, push: PushContext, change: ChangeSet, changeAt: number): void {
    const now = Date.now();
    state.pending = state.pending
      ? { push, change: mergeChanges(state.pending.change, change), changeAt: Math.min(state.pending.changeAt, changeAt), enqueuedAt: state.pending.enqueuedAt }
      : { push, change, changeAt, enqueuedAt: now };
    if (state.scheduled) return;
    state.scheduled = true;
    void this.queue.run(async () => {
      state.scheduled = false;
      const pending = state.pending;
      state.pending = undefined;
      if (!pending || state.closed) return;
      this.options.observer.queued((Date.now() - pending.enqueuedAt) / 1000);
      await this.serialize(state, () => this.pushTo(state, pending));
    });
  }

  private async pushTo(state: ConnectionState, pending: PendingPush): Promise<void> {
    const { conn } = state;
    const eds = conn.watched.get(TypeUrl.ClusterLoadAssignment);
    const plan = planPush(pending.change, conn.proxy, pending.push, eds?.names);
    let wrote = false;
    let clustersKept = false;
    for (const typeUrl of PUSH_ORDER) {
      const scope = plan.get(typeUrl);
      const watch = conn.watched.get(typeUrl);
      if (!scope || !watch || state.closed) continue;
      // Make before break: clusters that go away stay until routes no longer point at them.
      const result = await this.respond(state, typeUrl, watch, pending.push, scope, false, typeUrl === TypeUrl.Cluster);
      wrote = result.wrote || wrote;
      if (typeUrl === TypeUrl.Cluster) clustersKept = result.kept;
    }
    const clusters = conn.watched.get(TypeUrl.Cluster);
    if (clustersKept && clusters && !state.closed) {
      wrote = (await this.respond(state, TypeUrl.Cluster, clusters, pending.push, 'all', false, false)).wrote || wrote;
    }
    if (wrote) this.options.observer.converged((Date.now() - pending.changeAt) / 1000);
  }

  private serveStream(stream: Stream, protocol: 'sotw' | 'delta', auth?: XdsStreamAuth): void {
    let state: ConnectionState | undefined;
    const log = this.options.logger;
    stream.on('data', (request: DiscoveryRequest | DeltaDiscoveryRequest) => {
      if (!state) {
        let proxy: Proxy;
        try {
          const node = request.node;
          if (!node?.id) throw new ProxyIdError('the first request of a stream must carry node.id');
          proxy = parseProxy(node.id, structToJson(node.metadata));
        } catch (err) {
          log.warn(`rejecting xDS stream from ${stream.getPeer()}: ${(err as Error).message}`);
          stream.emit('error', { code: grpc.status.INVALID_ARGUMENT, details: (err as Error).message });
          return;
        }
        const conn = new XdsConnection(proxy, protocol, stream.getPeer());
        // A new stream's first answer waits for authentication and admission; later requests queue behind it.
        const s: ConnectionState = { conn, stream, closed: false, chain: Promise.resolve(), scheduled: false };
        s.chain = this.authorize(s, auth).then((ok) => (ok ? this.admission.acquire() : undefined));
        state = s;
      }
      const s = state;
      void this.serialize(s, async () => s.closed ? undefined :
        protocol === 'sotw' ? this.onSotwRequest(s, request as DiscoveryRequest) : this.onDeltaRequest(s, request as DeltaDiscoveryRequest),
      );
    });
    const close = () => {
      if (!state || state.closed) return;
      state.closed = true;
      state.abortWrite?.();
      // A stream refused or dropped while authenticating was never counted.
      if (!this.states.delete(state.conn)) return;
      this.options.observer.connections(-1);
      for (const [typeUrl, w] of state.conn.watched) if (w.rejected) this.options.observer.rejectCleared(SHORT_TYPE[typeUrl], state.conn.proxy.id);
      log.info(`closed connection for node:${state.conn.proxy.id}`);
    };
    stream.on('end', () => {
      close();
      stream.end();
    });
    stream.on('error', () => close());
    stream.on('close', () => close());
    stream.on('cancelled', () => close());
  }

  /**
   * Authenticates the stream's caller and checks it may act as the proxy it names
   * (XDS_AUTH, PILOT_ENABLE_XDS_IDENTITY_CHECK); registers the connection when it may.
   */
  private async authorize(state: ConnectionState, auth: XdsStreamAuth | undefined): Promise<boolean> {
    const { conn, stream } = state;
    const log = this.options.logger;
    if (auth) {
      try {
        const caller = await auth.authorize(stream, conn.proxy);
        if (caller) conn.identities = caller.identities;
      } catch (err) {
        const e = err instanceof XdsAuthError ? err : new XdsAuthError(grpc.status.UNAUTHENTICATED, (err as Error).message);
        log.warn(`refusing xDS stream for node:${conn.proxy.id} from ${conn.peer}: ${e.message}`);
        state.closed = true;
        stream.emit('error', { code: e.code, details: e.message });
        return false;
      }
    }
    if (state.closed) return false;
    this.states.set(conn, state);
    this.options.observer.connections(1);
    log.info(`new ${conn.protocol === 'delta' ? 'delta ' : ''}connection for node:${conn.proxy.id}`, {
      peer: conn.peer,
      generator: conn.proxy.generator || 'envoy',
      ...(conn.identities.length > 0 ? { identity: conn.identities.join(',') } : {}),
    });
    return true;
  }

  private serialize(state: ConnectionState, work: () => Promise<void>): Promise<void> {
    state.chain = state.chain.then(work).catch((err: Error) => {
      this.options.observer.internalError();
      this.options.logger.error(`xDS error for node:${state.conn.proxy.id}: ${err.stack ?? err.message}`);
    });
    return state.chain;
  }

  /** Waits for the first push context (requests may arrive before config has loaded). */
  private async push(): Promise<PushContext> {
    for (;;) {
      const push = this.options.currentPush();
      if (push) return push;
      await new Promise((r) => setTimeout(r, 20));
    }
  }

  private async onSotwRequest(state: ConnectionState, req: DiscoveryRequest): Promise<void> {
    const typeUrl = req.type_url;
    if (!isXdsTypeUrl(typeUrl)) {
      this.options.logger.debug(`node:${state.conn.proxy.id} asked for unsupported type ${typeUrl}; ignoring`);
      return;
    }
    const short = SHORT_TYPE[typeUrl];
    let watch = state.conn.watched.get(typeUrl);
    if (req.error_detail && req.error_detail.code) {
      this.nack(state, typeUrl, watch, req.response_nonce, req.error_detail.message ?? '');
      return;
    }
    if (!watch || req.response_nonce === '') {
      // A new subscription, or a proxy reconnecting with what it already has: answer in full.
      watch = newWatchState(namesOf(typeUrl, req.resource_names));
      state.conn.watched.set(typeUrl, watch);
      await this.respond(state, typeUrl, watch, await this.push(), 'all', true);
      return;
    }
    if (req.response_nonce !== watch.nonceSent) {
      this.options.observer.expiredNonce(short);
      this.options.logger.debug(`node:${state.conn.proxy.id} ${short}: expired nonce ${req.response_nonce} (sent ${watch.nonceSent})`);
      return;
    }
    this.ack(state, typeUrl, watch, req.response_nonce, req.version_info);
    // Most requests are plain ACKs with the same names: compare before building anything.
    if (!namesUnchanged(typeUrl, watch.names, req.resource_names)) {
      const requested = namesOf(typeUrl, req.resource_names);
      const previous = watch.names;
      watch.names = requested;
      // RDS and EDS are not state-of-the-world types: answer only the newly asked names.
      const added = requested && previous && !isStateOfTheWorldType(typeUrl) ? new Set([...requested].filter((n) => !previous.has(n))) : undefined;
      for (const name of watch.sent.keys()) if (requested && !requested.has(name)) watch.sent.delete(name);
      if (added && added.size === 0) return;
      await this.respond(state, typeUrl, watch, await this.push(), added ?? 'all', true);
    }
  }

  private async onDeltaRequest(state: ConnectionState, req: DeltaDiscoveryRequest): Promise<void> {
    const typeUrl = req.type_url;
    if (!isXdsTypeUrl(typeUrl)) {
      this.options.logger.debug(`node:${state.conn.proxy.id} asked for unsupported type ${typeUrl}; ignoring`);
      return;
    }
    let watch = state.conn.watched.get(typeUrl);
    if (req.error_detail && req.error_detail.code) {
      this.nack(state, typeUrl, watch, req.response_nonce, req.error_detail.message ?? '');
      return;
    }
    const subscribe = req.resource_names_subscribe;
    const unsubscribe = req.resource_names_unsubscribe;
    if (!watch) {
      const wildcard = subscribe.length === 0 ? typeUrl === TypeUrl.Listener || typeUrl === TypeUrl.Cluster : subscribe.includes('*');
      watch = newWatchState(wildcard ? undefined : internNameSet(subscribe));
      // What the proxy already has (after a reconnect) need not be sent again.
      for (const [name, version] of Object.entries(req.initial_resource_versions ?? {})) watch.sent.set(name, versionMarker(version));
      watch.sent.settle();
      state.conn.watched.set(typeUrl, watch);
      await this.respond(state, typeUrl, watch, await this.push(), 'all', true);
      return;
    }
    if (req.response_nonce !== '' && req.response_nonce !== watch.nonceSent && subscribe.length === 0 && unsubscribe.length === 0) {
      this.options.observer.expiredNonce(SHORT_TYPE[typeUrl]);
      return;
    }
    if (req.response_nonce !== '' && req.response_nonce === watch.nonceSent) this.ack(state, typeUrl, watch, req.response_nonce, watch.versionSent);
    if (subscribe.length === 0 && unsubscribe.length === 0) return;
    if (subscribe.includes('*')) watch.names = undefined;
    const added = new Set<string>();
    if (watch.names) for (const n of subscribe) if (!watch.names.has(n)) added.add(n);
    // Replaced, never edited in place: push plans index subscriptions by identity, and
    // identical subscriptions are shared.
    if (watch.names) watch.names = changedSubscription(watch.names, subscribe, unsubscribe);
    for (const n of unsubscribe) if (n !== '*') watch.sent.delete(n);
    if (added.size > 0 || subscribe.includes('*')) await this.respond(state, typeUrl, watch, await this.push(), watch.names ? added : 'all', true);
  }

  private ack(state: ConnectionState, typeUrl: XdsTypeUrl, watch: WatchState, nonce: string, version: string): void {
    watch.nonceAcked = nonce;
    watch.versionAcked = version;
    watch.ackedAt = Date.now();
    if (watch.rejected !== undefined) {
      watch.rejected = undefined;
      this.options.observer.rejectCleared(SHORT_TYPE[typeUrl], state.conn.proxy.id);
    }
  }

  private nack(state: ConnectionState, typeUrl: XdsTypeUrl, watch: WatchState | undefined, nonce: string, message: string): void {
    const short = SHORT_TYPE[typeUrl];
    if (watch && nonce !== watch.nonceSent) {
      this.options.observer.expiredNonce(short);
      return;
    }
    if (watch) watch.rejected = message;
    this.options.observer.rejected(short, state.conn.proxy.id, message);
    this.options.logger.warn(`${short.toUpperCase()}: ACK ERROR node:${state.conn.proxy.id} nonce:${nonce}: ${message}`);
  }

  /**
   * Generates `typeUrl` for the proxy and writes what it does not have yet. `requested`
   * answers a request: the response goes out even when nothing changed (the proxy waits
   * for it). Returns whether anything was written.
   */
  private async respond(
    state: ConnectionState,
    typeUrl: XdsTypeUrl,
    watch: WatchState,
    push: PushContext,
    scope: ResponseToPrepare['scope'],
    requested: boolean,
    keepRemoved = false,
  ): Promise<{ wrote: boolean; kept: boolean }> {
    const donePreparing = await this.budget.startPreparing();
    try {
      return await this.prepareAndSend({ state, typeUrl, watch, push, scope, requested, keepRemoved }, donePreparing);
    } finally {
      donePreparing();
    }
  }

  /** Builds, encodes and writes one response; calls `donePreparing` once its write has started. */
  private async prepareAndSend(response: ResponseToPrepare, donePreparing: () => void): Promise<{ wrote: boolean; kept: boolean }> {
    const { state, typeUrl, watch, push, scope, requested, keepRemoved } = response;
    const { conn } = state;
    const short = SHORT_TYPE[typeUrl];
    const generator = this.options.generators.get(conn.proxy.generator) ?? this.options.generators.get('');
    if (!generator) throw new Error(`no generator for GENERATOR=${conn.proxy.generator}`);
    const started = process.hrtime.bigint();
    const names = namesToGenerate(watch, scope, conn.protocol, typeUrl);
    const nothing = { wrote: false, kept: false };
    if (names && names.length === 0 && !requested) return nothing;
    let resources: XdsResource[];
    try {
      resources = names && names.length === 0 ? [] : generator.generate({ proxy: conn.proxy, push, typeUrl, names });
    } catch (err) {
      this.options.observer.buildError(short);
      throw err;
    }
    const kept = keepRemoved && keepRemovedResources(watch, resources);
    const buildSeconds = Number(process.hrtime.bigint() - started) / 1e9;
    const nonce = conn.nextNonce();
    // Decide what to send, then wait for room under the write budget before encoding it:
    // the encoded response is what takes memory.
    let sending: readonly XdsResource[];
    let encode: () => Buffer;
    if (conn.protocol === 'sotw') {
      const planned = planSotwResponse(watch, typeUrl, resources, requested);
      if (!planned) return { wrote: false, kept };
      sending = planned.resources;
      encode = () => {
        planned.recordSent();
        return encodeDiscoveryResponse(typeUrl, push.version, nonce, planned.resources, this.options.controlPlaneId);
      };
    } else {
      const planned = planDeltaResponse(watch, resources, names, requested);
      if (!planned) return { wrote: false, kept };
      sending = planned.resources;
      encode = () => {
        planned.recordSent();
        return encodeDeltaDiscoveryResponse(typeUrl, push.version, nonce, planned.resources, planned.removed, this.options.controlPlaneId);
      };
    }
    const reserved = await this.budget.reserve(typeUrl, sending);
    try {
      if (state.closed) return nothing;
      // send() hands the response to the stream before its first await.
      const sent = this.send(state, typeUrl, watch, push, nonce, encode(), resources.length, buildSeconds, kept);
      donePreparing();
      return await sent;
    } finally {
      this.budget.release(reserved);
    }
  }

  private async send(
    state: ConnectionState, typeUrl: XdsTypeUrl, watch: WatchState, push: PushContext, nonce: string, body: Buffer, count: number, buildSeconds: number, kept: boolean,
  ): Promise<{ wrote: boolean; kept: boolean }> {
    const { conn } = state;
    const short = SHORT_TYPE[typeUrl];
    watch.nonceSent = nonce;
    watch.versionSent = push.version;
    watch.sentAt = Date.now();
    const sendStarted = process.hrtime.bigint();
    try {
      await this.write(state, body);
    } catch (err) {
      this.options.observer.sendError(short);
      this.options.logger.warn(`${short.toUpperCase()}: send failure for node:${conn.proxy.id}: ${(err as Error).message}`);
      return { wrote: false, kept: false };
    }
    this.options.observer.pushed(short, body.length, buildSeconds, Number(process.hrtime.bigint() - sendStarted) / 1e9);
    if (this.options.logger.enabled('debug')) {
      this.options.logger.debug(`${short.toUpperCase()}: PUSH node:${conn.proxy.id} resources:${count} size:${body.length} nonce:${nonce}`);
    }
    return { wrote: true, kept };
  }

  /**
   * Writes one response and waits until it has been handed to the socket (the write
   * callback), so a push to thousands of proxies is paced by the network instead of queueing
   * every response in memory; the grpc-js stream's own buffer counts messages, not bytes. A
   * stream closing meanwhile fails the write (grpc-js never calls back for a cancelled call).
   */
  private async write(state: ConnectionState, body: Buffer): Promise<void> {
    if (state.closed) throw new Error('stream closed');
    await new Promise<void>((resolve, reject) => {
      const done = (err?: Error | null) => {
        clearTimeout(timer);
        state.abortWrite = undefined;
        if (err) reject(err);
        else resolve();
      };
      const timer = setTimeout(() => {
        this.options.observer.writeTimeout();
        done(new Error(`write not taken within ${WRITE_TIMEOUT_MS} ms`));
      }, WRITE_TIMEOUT_MS);
      state.abortWrite = () => done(new Error('stream closed'));
      state.stream.write(body, (err?: Error | null) => done(err));
    });
  }
}

/** The subscription a request names: undefined for a wildcard, else the shared interned set. */
function namesOf(typeUrl: XdsTypeUrl, names: string[]): Set<string> | undefined {
  if (names.length === 0 || names.includes('*')) return isStateOfTheWorldType(typeUrl) || names.includes('*') ? undefined : new Set();
  return internNameSet(names);
}

/**
 * Whether a request names exactly the current subscription. Checked on every ACK, so it
 * reads the request's list as is rather than building a set from it; a list with repeated
 * names counts as a change and is settled by the interned comparison that follows.
 */
function namesUnchanged(typeUrl: XdsTypeUrl, current: Set<string> | undefined, requested: string[]): boolean {
  if (requested.length === 0 || requested.includes('*')) {
    const all = isStateOfTheWorldType(typeUrl) || requested.includes('*');
    return all ? current === undefined : current?.size === 0;
  }
  if (!current || current.size !== requested.length) return false;
  for (const n of requested) if (!current.has(n)) return false;
  return true;
}
