import { XdsGenerator, XdsResource } from '../model/generator';
import { ScopedLogger } from '../logging';
import { EventLoopSlices } from '../shared/event-loop-slices';
import { PushContext } from '../model/push-context';
import { SHORT_TYPE, XdsTypeUrl } from '../envoy/type-urls';
import { OutgoingMessage } from '../envoy/wire';
import type { AdsStream } from './ads-stream';
import { WatchState } from './connection';
import { XdsObserver } from './observer';
import { hostsToGenerate, keepRemovedResources, namesToGenerate, PlannedResponse, ResponseScope } from './response-planner';
import { SharedEncodings } from './shared-encodings';
import { WriteBudget } from './write-budget';

/**
 * Answers one type on one stream: generates it for the proxy, lets the stream's protocol
 * decide what goes out against what the proxy has, waits for room under the write budget,
 * encodes, writes and reports it. One per server, shared by its streams, since the
 * generators and the budget are; the streams keep the protocol, this keeps the order of the
 * steps and what each one costs (pilot_xds_push_time, pilot_xds_send_time, errors). Responses
 * with the same bytes are encoded once and written to every stream that gets them
 * (shared-encodings).
 */

/** What the responder reads of the server's options. */
export interface ResponderOptions {
  /** Generators by node metadata GENERATOR; `''` serves Envoy sidecars and routers. */
  generators: ReadonlyMap<string, XdsGenerator>;
  logger: ScopedLogger;
  observer: XdsObserver;
}

/** What a stream asks the responder to send. */
export interface ResponseToPrepare<R extends PlannedResponse = PlannedResponse> {
  stream: AdsStream<unknown, R>;
  typeUrl: XdsTypeUrl;
  watch: WatchState;
  push: PushContext;
  scope: ResponseScope;
  requested: boolean;
  keepRemoved: boolean;
  /** Called as soon as the response is with gRPC (the socket may take it later) or nothing is written; it may be called again after. */
  handedOver?: () => void;
}

/** Whether anything was written, and whether resources that went away were kept (make before break). */
export interface ResponseOutcome {
  wrote: boolean;
  kept: boolean;
}

/**
 * Responses prepared back to back before I/O gets a turn. Long enough that a connect storm's
 * large responses still go out in batches: in bench:push, slices of 2 ms (the push queue's)
 * cost the connect a fifth more CPU on both ends (more, smaller reads and writes) for the same
 * shorter stalls as 20 ms, which cost it about 5 %; without slices /ready waited up to 0.8 s.
 */
const RESPONSE_SLICE_MS = 20;

export class Responder {
  private readonly encodings = new SharedEncodings('s');

  constructor(
    private readonly options: ResponderOptions,
    private readonly budget: WriteBudget,
    /** Every response the server prepares, for pushes and for requests, takes its turn in these. */
    private readonly slices = new EventLoopSlices(RESPONSE_SLICE_MS),
  ) {}

  respond<R extends PlannedResponse>(response: ResponseToPrepare<R>): Promise<ResponseOutcome> {
    // A burst of requests (a connect storm's first ones, read from one socket) is answered in
    // slices: answered in one piece of microtasks, it held /ready and every read for a second.
    const turn = this.slices.due();
    if (turn) return turn.then(() => this.prepareInTurn(response));
    return this.prepareInTurn(response);
  }

  private prepareInTurn<R extends PlannedResponse>(response: ResponseToPrepare<R>): Promise<ResponseOutcome> {
    // Most responses find a slot free: they go on without a turn through the promise queue.
    const slot = this.budget.startPreparingNow();
    return slot ? this.prepareAndSend(response, slot) : this.budget.startPreparing().then((s) => this.prepareAndSend(response, s));
  }

  /** Builds, encodes and writes one response; frees its preparation slot once its write has started, or it ends otherwise. */
  private async prepareAndSend<R extends PlannedResponse>(response: ResponseToPrepare<R>, donePreparing: () => void): Promise<ResponseOutcome> {
    try {
      const { stream, typeUrl, watch, push, scope, requested, keepRemoved } = response;
      const { conn } = stream;
      const short = SHORT_TYPE[typeUrl];
      const generator = this.options.generators.get(conn.proxy.generator) ?? this.options.generators.get('');
      if (!generator) throw new Error(`no generator for GENERATOR=${conn.proxy.generator}`);
      // performance.now, not hrtime.bigint: a BigInt per reading, three readings per response.
      const started = performance.now();
      const names = namesToGenerate(watch, scope, conn.protocol, typeUrl);
      const hosts = hostsToGenerate(watch, scope, conn.protocol);
      const nothing = { wrote: false, kept: false };
      if (names && names.length === 0 && !requested) return nothing;
      let resources: XdsResource[];
      try {
        resources = names && names.length === 0 ? [] : generator.generate({ proxy: conn.proxy, push, typeUrl, names, hosts });
      } catch (err) {
        this.options.observer.buildError(short);
        throw err;
      }
      // A list many proxies share is frozen (sharedList): this proxy's additions go to a copy.
      if (keepRemoved && Object.isFrozen(resources)) resources = [...resources];
      const kept = keepRemoved && keepRemovedResources(watch, resources, hosts);
      const buildSeconds = (performance.now() - started) / 1000;
      // Decide what to send, then wait for room under the write budget before encoding it:
      // the encoded response is what takes memory.
      const planned = stream.planResponse(typeUrl, watch, resources, names, requested, hosts);
      if (!planned) return { wrote: false, kept };
      // Most responses fit at once: only those that must wait for room take a turn through a promise.
      const reserved = this.budget.reserveNow(typeUrl, planned.resources, planned.runs) ?? (await this.budget.reserve(typeUrl, planned.resources, planned.runs));
      try {
        if (stream.closed) return nothing;
        planned.recordSent();
        const content = { protocol: conn.protocol, typeUrl, version: push.version, resources: planned.resources, removed: planned.removed, runs: planned.runs };
        const encoding = this.encodings.encodingFor(content, watch, (nonce) => stream.encodeResponse(typeUrl, planned, push.version, nonce));
        this.options.observer.encoded(short, encoding.reused);
        const sent = this.send(stream, typeUrl, watch, push, encoding.nonce, encoding.body, resources.length, buildSeconds, kept);
        // The stream has the response: the next one may be prepared meanwhile.
        donePreparing();
        response.handedOver?.();
        return await sent;
      } finally {
        this.budget.release(reserved);
      }
    } finally {
      donePreparing();
      response.handedOver?.();
    }
  }

  /** Hands the response to the stream before it returns; resolves once gRPC has taken it (or failed). */
  private send<R extends PlannedResponse>(
    stream: AdsStream<unknown, R>, typeUrl: XdsTypeUrl, watch: WatchState, push: PushContext, nonce: string, body: OutgoingMessage, count: number, buildSeconds: number, kept: boolean,
  ): Promise<ResponseOutcome> {
    const { conn } = stream;
    const short = SHORT_TYPE[typeUrl];
    watch.nonceSent = nonce;
    watch.versionSent = push.version;
    watch.sentAt = Date.now();
    const sendStarted = performance.now();
    return stream.write(body).then(
      () => {
        this.options.observer.pushed(short, body.length, buildSeconds, (performance.now() - sendStarted) / 1000);
        if (this.options.logger.enabled('debug')) {
          this.options.logger.debug(`${short.toUpperCase()}: PUSH node:${conn.proxy.id} resources:${count} size:${body.length} nonce:${nonce}`);
        }
        return { wrote: true, kept };
      },
      (err: Error) => {
        this.options.observer.sendError(short);
        this.options.logger.warn(`${short.toUpperCase()}: send failure for node:${conn.proxy.id}: ${err.message}`);
        return { wrote: false, kept: false };
      },
    );
  }
}
