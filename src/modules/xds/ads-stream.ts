import type * as grpc from '@grpc/grpc-js';
import { grpcLibrary } from '../shared/grpc-library';
import { ChangeSet, XdsResource } from '../model/generator';
import { ScopedLogger } from '../logging';
import { PushContext } from '../model/push-context';
import { PUSH_ORDER, SHORT_TYPE, TypeUrl, XdsTypeUrl } from '../envoy/type-urls';
import { OutgoingMessage } from '../envoy/wire';
import type { AdsCall } from './ads-service';
import { WatchState, XdsConnection } from './connection';
import { XdsConnectionListener } from './connection-listener';
import { DebugResource, parseDebugRequest, XdsDebugError, XdsDebugService } from './debug-requests';
import { XdsObserver } from './observer';
import { mergeChanges, planPush } from './push-plan';
import { PushQueue } from './push-queue';
import type { Responder, ResponseOutcome } from './responder';
import { PlannedResponse, ResponseScope } from './response-planner';

/**
 * One proxy's ADS stream, whichever the protocol: its requests and pushes run one at a time,
 * a push waits for its turn in the server's queue (merging with newer ones meanwhile) and
 * goes out type by type in push order, and each response is written paced by the socket.
 * The protocols (sotw-stream, delta-stream) read requests and shape responses on top; the
 * server only opens streams and fans pushes out to them.
 */

/** What a stream reads of the server's options. */
export interface StreamOptions {
  controlPlaneId: string;
  logger: ScopedLogger;
  observer: XdsObserver;
  /** The current push context; undefined until the first one is built (requests then wait). */
  currentPush: () => PushContext | undefined;
  /** Told of every admitted stream and its close. */
  connectionListeners?: readonly XdsConnectionListener[];
}

/** What all streams of one server share. */
export interface StreamServices {
  readonly options: StreamOptions;
  readonly queue: PushQueue;
  readonly responder: Responder;
  /** Who answers debug requests (debug-requests.ts); none = they are refused as unimplemented. */
  readonly debug?: () => XdsDebugService | undefined;
}

interface PendingPush {
  push: PushContext;
  change: ChangeSet;
  /** When the earliest change in this push happened (for convergence time). */
  changeAt: number;
  enqueuedAt: number;
}

/** A response gRPC has not taken after this long counts in pilot_xds_write_timeout. */
export const WRITE_TIMEOUT_MS = 30_000;

export abstract class AdsStream<Request = unknown, Response extends PlannedResponse = PlannedResponse> {
  private isClosed = false;
  /** Serializes request handling and pushes on one stream. */
  private chain: Promise<void> = Promise.resolve();
  private pending?: PendingPush;
  private scheduled = false;
  /** The write in progress, if any: when it started, and what fails it (the stream closed, or it took too long). */
  private inFlight?: { startedAt: number; fail: (err?: Error | null) => void };

  constructor(
    readonly conn: XdsConnection,
    private readonly call: AdsCall,
    private readonly services: StreamServices,
  ) {}

  /** Handles one request: what to answer, and how the proxy's subscriptions and acknowledgements change. */
  protected abstract onRequest(request: Request): Promise<void>;

  /** What a response of `typeUrl` carries, from `generated`; undefined when a push has nothing to send. */
  abstract planResponse(
    typeUrl: XdsTypeUrl, watch: WatchState, generated: XdsResource[], names: readonly string[] | undefined, requested: boolean, hosts?: ReadonlySet<string>,
  ): Response | undefined;

  /** The response as written on the stream. */
  abstract encodeResponse(typeUrl: XdsTypeUrl, response: Response, version: string, nonce: string): OutgoingMessage;

  protected get options(): StreamOptions {
    return this.services.options;
  }

  get closed(): boolean {
    return this.isClosed;
  }

  /** Holds this stream's requests and pushes back until `first` (authentication, admission) is done. */
  startAfter(first: Promise<void>): void {
    this.chain = first;
  }

  /** Handles `request` after everything before it on this stream. */
  receive(request: Request): void {
    void this.serialize(async () => (this.closed ? undefined : this.onRequest(request)));
  }

  /** The stream is gone: nothing more is sent, and the write in progress fails. */
  close(): void {
    this.isClosed = true;
    this.inFlight?.fail(new Error('stream closed'));
  }

  /**
   * Fails the write in progress when gRPC has not taken it within WRITE_TIMEOUT_MS
   * (pilot_xds_write_timeout). The server checks its streams now and then: a timer per write
   * cost more than the write itself on a push to thousands of proxies.
   */
  checkWrite(now: number): void {
    const flight = this.inFlight;
    if (!flight || now - flight.startedAt < WRITE_TIMEOUT_MS) return;
    this.options.observer.writeTimeout();
    flight.fail(new Error(`write not taken within ${WRITE_TIMEOUT_MS} ms`));
  }

  /** Ends the stream from this side (the server is stopping). */
  end(): void {
    this.call.end();
  }

  /**
   * Queues a push of `change` in `push`. A stream has at most one push queued: a newer one
   * merges into it, so a slow proxy never accumulates a backlog.
   *
   * The push waits for its stream first (a write the proxy has not taken yet, a request being
   * answered) and only then for a place among the pushes running at once (PILOT_PUSH_THROTTLE),
   * which it holds until its last response is handed to gRPC: a proxy that stopped reading
   * holds its bytes under the write budget, never a place other proxies' pushes wait for.
   */
  queuePush(push: PushContext, change: ChangeSet, changeAt: number): void {
    const now = Date.now();
    this.pending = this.pending
      ? { push, change: mergeChanges(this.pending.change, change), changeAt: Math.min(this.pending.changeAt, changeAt), enqueuedAt: this.pending.enqueuedAt }
      : { push, change, changeAt, enqueuedAt: now };
    if (this.scheduled) return;
    this.scheduled = true;
    void this.serialize(() =>
      this.services.queue.run(async (handedOver) => {
        this.scheduled = false;
        const pending = this.pending;
        this.pending = undefined;
        if (!pending || this.closed) return;
        this.options.observer.queued((Date.now() - pending.enqueuedAt) / 1000);
        await this.pushChange(pending, handedOver);
      }),
    );
  }

  /** Pushes one change; `handedOver` once its last planned response is with gRPC (or there is none). */
  private async pushChange(pending: PendingPush, handedOver: () => void): Promise<void> {
    const { conn } = this;
    const eds = conn.watched.get(TypeUrl.ClusterLoadAssignment);
    const plan = planPush(pending.change, conn.proxy, pending.push, eds?.names, conn.protocol);
    // Requests wait for this push (the stream's chain), so what is watched cannot change meanwhile.
    const types = PUSH_ORDER.filter((t) => plan.has(t) && conn.watched.has(t));
    let wrote = false;
    let clustersKept = false;
    for (let i = 0; i < types.length && !this.closed; i++) {
      const typeUrl = types[i];
      // Make before break: clusters that go away stay until routes no longer point at them.
      const result = await this.respond(typeUrl, conn.watched.get(typeUrl)!, pending.push, plan.get(typeUrl)!, false, typeUrl === TypeUrl.Cluster, i === types.length - 1 ? handedOver : undefined);
      wrote = result.wrote || wrote;
      if (typeUrl === TypeUrl.Cluster) clustersKept = result.kept;
    }
    const clusters = conn.watched.get(TypeUrl.Cluster);
    if (clustersKept && clusters && !this.closed) {
      wrote = (await this.respond(TypeUrl.Cluster, clusters, pending.push, plan.get(TypeUrl.Cluster) ?? 'all', false, false)).wrote || wrote;
    }
    if (wrote) this.options.observer.converged((Date.now() - pending.changeAt) / 1000);
  }

  /**
   * Generates `typeUrl` for the proxy and writes what it does not have yet. `requested`
   * answers a request: the response goes out even when nothing changed (the proxy waits
   * for it). `keepRemoved` keeps what went away for now (make before break). `handedOver` is
   * called once the response is with gRPC, or once it is clear nothing is written.
   */
  protected respond(
    typeUrl: XdsTypeUrl, watch: WatchState, push: PushContext, scope: ResponseScope, requested: boolean, keepRemoved = false, handedOver?: () => void,
  ): Promise<ResponseOutcome> {
    return this.services.responder.respond({ stream: this, typeUrl, watch, push, scope, requested, keepRemoved, handedOver });
  }

  /**
   * Answers a debug request with one response (`encode` frames it for the stream's protocol),
   * or ends the stream with the status saying why it cannot be answered: a debug client waits
   * for exactly one answer, so it must never be left without one.
   */
  protected async answerDebug(typeUrl: string, resourceNames: readonly string[], encode: (resources: DebugResource[], nonce: string) => Buffer): Promise<void> {
    // A stream that only asks debug questions is no proxy (syncz leaves it out).
    if (this.conn.watched.size === 0) this.conn.debugClient = true;
    let resources: DebugResource[];
    try {
      const query = parseDebugRequest(typeUrl, resourceNames);
      const service = this.services.debug?.();
      if (!service) throw new XdsDebugError(grpcLibrary().status.UNIMPLEMENTED, 'this server answers no debug requests');
      resources = await service.answer(this.conn, query);
    } catch (err) {
      const e = err instanceof XdsDebugError ? err : new XdsDebugError(grpcLibrary().status.INTERNAL, (err as Error).message);
      this.options.logger.warn(`debug request ${typeUrl} ${JSON.stringify(resourceNames).slice(0, 200)} from node:${this.conn.proxy.id} (${this.conn.peer}) failed: ${e.message}`);
      this.endWithStatus(e.code, e.message);
      return;
    }
    await this.write(encode(resources, this.conn.nextNonce()));
  }

  /** Ends the stream from this side with a gRPC status (a refused request); the server's close handling forgets it. */
  protected endWithStatus(code: grpc.status, details: string): void {
    if (this.closed) return;
    this.call.emit('error', { code, details });
  }

  protected ack(typeUrl: XdsTypeUrl, watch: WatchState, nonce: string, version: string): void {
    watch.nonceAcked = nonce;
    watch.versionAcked = version;
    watch.ackedAt = Date.now();
    if (watch.rejected !== undefined) {
      watch.rejected = undefined;
      this.options.observer.rejectCleared(SHORT_TYPE[typeUrl], this.conn.proxy.id);
    }
  }

  protected nack(typeUrl: XdsTypeUrl, watch: WatchState | undefined, nonce: string, message: string): void {
    const short = SHORT_TYPE[typeUrl];
    if (watch && nonce !== watch.nonceSent) {
      this.options.observer.expiredNonce(short);
      return;
    }
    if (watch) watch.rejected = message;
    this.options.observer.rejected(short, this.conn.proxy.id, message);
    this.options.logger.warn(`${short.toUpperCase()}: ACK ERROR node:${this.conn.proxy.id} nonce:${nonce}: ${message}`);
  }

  /** Waits for the first push context (requests may arrive before config has loaded). */
  protected async waitForPush(): Promise<PushContext> {
    for (;;) {
      const push = this.options.currentPush();
      if (push) return push;
      await new Promise((r) => setTimeout(r, 20));
    }
  }

  /**
   * Writes one response and waits until it has been handed to the socket (the write
   * callback), so a push to thousands of proxies is paced by the network instead of queueing
   * every response in memory; the grpc-js stream's own buffer counts messages, not bytes. A
   * stream closing meanwhile fails the write (grpc-js never calls back for a cancelled call).
   */
  write(body: OutgoingMessage): Promise<void> {
    if (this.closed) return Promise.reject(new Error('stream closed'));
    return new Promise<void>((resolve, reject) => {
      let settled = false;
      const flight = {
        startedAt: Date.now(),
        // The first of the write callback, a close and the timeout settles the write.
        fail: (err?: Error | null) => {
          if (settled) return;
          settled = true;
          if (this.inFlight === flight) this.inFlight = undefined;
          if (err) reject(err);
          else resolve();
        },
      };
      this.inFlight = flight;
      this.call.write(body, flight.fail);
    });
  }

  private serialize(work: () => Promise<void>): Promise<void> {
    this.chain = this.chain.then(work).catch((err: Error) => {
      this.options.observer.internalError();
      this.options.logger.error(`xDS error for node:${this.conn.proxy.id}: ${err.stack ?? err.message}`);
    });
    return this.chain;
  }
}
