/**
 * One proxy stream carried to the daemon by the agent's xDS proxy. Messages pass through
 * unchanged; what the relay adds is what happens when the daemon goes away (UNAVAILABLE: it
 * died, restarted, froze past the keepalive, or was never there):
 *
 * - A stream the daemon never answered is retried transparently once the daemon is reachable:
 *   every request the proxy sent on it is replayed on the new upstream stream. The proxy sees a
 *   slow first answer, not a failure it would back off from.
 * - A stream the daemon had answered stays open toward the proxy, which keeps serving its last
 *   good config, and is ended with UNAVAILABLE only once the daemon is reachable again: xDS
 *   clients restart an answered stream at once, resuming with the versions they hold, so the
 *   proxy reconnects as soon as it can succeed, not after its own backoff has grown.
 *
 * Any other ending (OK, a refusal such as PERMISSION_DENIED) is passed to the proxy as it is.
 * A CANCELLED from the daemon (a server shutting down resets its streams) counts as going away.
 */
import type * as grpc from '@grpc/grpc-js';
import { grpcLibrary } from '../shared/grpc-library';
import { Backoff } from '../shared/backoff';
import { DEFAULT_RECONNECT_BACKOFF } from '../proxy/xds/xds-client';

type UpstreamCall = grpc.ClientDuplexStream<Buffer, Buffer>;
type DownstreamCall = grpc.ServerDuplexStream<Buffer, Buffer>;

/** What a relay needs of the link to the daemon (the xDS proxy provides it). */
export interface DaemonLink {
  /** A new call to the daemon on the current channel. */
  open(method: string): UpstreamCall;
  /** Resolves once the daemon accepts connections again; rejects when the agent stops. */
  reachable(): Promise<void>;
  /** The daemon answered on a stream. */
  answered(): void;
  /** A stream to the daemon failed with UNAVAILABLE. */
  lost(details: string): void;
  /** Other failures, for the log. */
  failed(message: string): void;
}

/** A proxy that sends this much before the first answer is not a proxy: stop buffering it. */
const MAX_BUFFERED_BYTES = 4 * 1024 * 1024;

export class XdsRelay {
  private upstream: UpstreamCall | undefined;
  /** Whether the proxy has had a response on this stream. */
  private answered = false;
  /** Until the first answer: everything the proxy sent, for a replay on a new upstream stream. */
  private buffered: Buffer[] = [];
  private bufferedBytes = 0;
  private closed = false;
  /** Spaces out retries when the daemon is reachable but keeps failing the stream. */
  private readonly retries = new Backoff(DEFAULT_RECONNECT_BACKOFF);

  constructor(
    private readonly method: string,
    private readonly downstream: DownstreamCall,
    private readonly link: DaemonLink,
    private readonly onClosed: (relay: XdsRelay) => void,
  ) {}

  start(): void {
    const d = this.downstream;
    d.on('data', (msg: Buffer) => this.fromProxy(msg));
    d.on('end', () => this.upstream?.end());
    d.on('cancelled', () => this.close());
    d.on('error', () => this.close());
    this.connect();
  }

  /** Ends the relay toward the proxy (the agent stops). */
  shutdown(reason: string): void {
    if (this.closed) return;
    this.fail(grpcLibrary().status.UNAVAILABLE, reason);
  }

  private connect(): void {
    let call: UpstreamCall;
    try {
      call = this.link.open(this.method);
    } catch (err) {
      this.fail(grpcLibrary().status.UNAVAILABLE, `xDS proxy: ${(err as Error).message}`);
      return;
    }
    this.upstream = call;
    let ended = false;
    // grpc-js ends a client call with `status` (after `error` unless OK); either ends it, once.
    const end = (code: grpc.status, details: string, metadata?: grpc.Metadata) => {
      if (ended) return;
      ended = true;
      void this.upstreamEnded(call, code, details, metadata);
    };
    call.on('data', (msg: Buffer) => this.fromDaemon(msg));
    call.on('status', (s: grpc.StatusObject) => end(s.code, s.details, s.metadata));
    call.on('error', (e: grpc.ServiceError) => end(e.code, e.details || e.message, e.metadata));
    for (const msg of this.buffered) call.write(msg);
  }

  private fromProxy(msg: Buffer): void {
    if (!this.answered) {
      this.bufferedBytes += msg.length;
      if (this.bufferedBytes > MAX_BUFFERED_BYTES) {
        this.fail(grpcLibrary().status.RESOURCE_EXHAUSTED, `xDS proxy: more than ${MAX_BUFFERED_BYTES} bytes of requests before the daemon's first answer`);
        return;
      }
      this.buffered.push(msg);
    }
    this.upstream?.write(msg);
  }

  private fromDaemon(msg: Buffer): void {
    if (!this.answered) {
      this.answered = true;
      this.buffered = [];
      this.bufferedBytes = 0;
    }
    this.retries.reset();
    this.link.answered();
    this.downstream.write(msg);
  }

  private async upstreamEnded(call: UpstreamCall, code: grpc.status, details: string, metadata?: grpc.Metadata): Promise<void> {
    if (this.upstream !== call || this.closed) return;
    this.upstream = undefined;
    if (code === grpcLibrary().status.OK) {
      this.close();
      this.downstream.end();
      return;
    }
    // Our own cancel never gets here (close() comes first), so CANCELLED is the daemon's doing:
    // like UNAVAILABLE, it is the daemon going away, not a refusal.
    if (code !== grpcLibrary().status.UNAVAILABLE && code !== grpcLibrary().status.CANCELLED) {
      this.link.failed(`xDS stream to the daemon failed: ${details}`);
      this.fail(code, details, metadata);
      return;
    }
    this.link.lost(details);
    const pause = this.retries.next();
    try {
      await Promise.all([this.link.reachable(), new Promise((r) => setTimeout(r, this.answered ? 0 : pause))]);
    } catch {
      return; // the agent stops; shutdown() ends the proxy's stream
    }
    if (this.closed) return;
    if (this.answered) this.fail(grpcLibrary().status.UNAVAILABLE, `the daemon's stream ended (${details}); the daemon is reachable again: reconnect`);
    else this.connect();
  }

  private fail(code: grpc.status, details: string, metadata?: grpc.Metadata): void {
    this.close();
    this.downstream.emit('error', { code, details, metadata });
  }

  private close(): void {
    if (this.closed) return;
    this.closed = true;
    const call = this.upstream;
    this.upstream = undefined;
    call?.cancel();
    this.onClosed(this);
  }
}
