import { grpcLibrary } from '../shared/grpc-library';
import { parseProxy, Proxy, ProxyIdError } from '../model/proxy';
import { structToJson } from '../envoy/struct';
import { SHORT_TYPE } from '../envoy/type-urls';
import { DeltaDiscoveryRequest, DiscoveryRequest } from '../envoy/discovery-requests';
import { AdsCall, AdsProtocol } from './ads-service';
import { AdsStream, StreamServices, WRITE_TIMEOUT_MS } from './ads-stream';
import { XdsConnection } from './connection';
import { DeltaStream } from './delta-stream';
import { RateLimiter } from './rate-limiter';
import { SotwStream } from './sotw-stream';
import { XdsAuthError, XdsStreamAuth } from './stream-auth';

/**
 * The server's open ADS streams, from their first request to their close: the first request
 * names the proxy, the caller is authenticated for it (XDS_AUTH), the stream counted and
 * admitted at the configured rate (PILOT_MAX_REQUESTS_PER_SECOND), and forgotten when it
 * closes. Apart from the server so that the server only composes listeners, this registry
 * and the push fan-out, and from the streams, which never see the others.
 */
export class OpenStreams {
  private readonly streams = new Map<XdsConnection, AdsStream>();
  /** Checks the streams' writes for timeouts while any stream is open (see AdsStream.checkWrite). */
  private writeChecks: NodeJS.Timeout | undefined;

  constructor(
    private readonly services: StreamServices,
    private readonly admission: RateLimiter,
  ) {}

  connections(): XdsConnection[] {
    return [...this.streams.keys()];
  }

  /** The streams registered (authenticated) and not closed yet. */
  values(): IterableIterator<AdsStream> {
    return this.streams.values();
  }

  /** Serves one ADS call; `auth` decides who may open it, none = anyone. */
  serve(call: AdsCall, protocol: AdsProtocol, auth?: XdsStreamAuth): void {
    let stream: AdsStream | undefined;
    const log = this.services.options.logger;
    call.on('data', (request: DiscoveryRequest | DeltaDiscoveryRequest) => {
      if (!stream) {
        let proxy: Proxy;
        try {
          const node = request.node;
          if (!node?.id) throw new ProxyIdError('the first request of a stream must carry node.id');
          proxy = parseProxy(node.id, structToJson(node.metadata));
        } catch (err) {
          log.warn(`rejecting xDS stream from ${call.getPeer()}: ${(err as Error).message}`);
          call.emit('error', { code: grpcLibrary().status.INVALID_ARGUMENT, details: (err as Error).message });
          return;
        }
        const conn = new XdsConnection(proxy, protocol, call.getPeer());
        const s: AdsStream = protocol === 'sotw' ? new SotwStream(conn, call, this.services) : new DeltaStream(conn, call, this.services);
        // A new stream's first answer waits for authentication and admission; later requests queue behind it.
        s.startAfter(this.authorize(s, call, auth).then((ok) => (ok ? this.admission.acquire() : undefined)));
        stream = s;
      }
      stream.receive(request);
    });
    const close = () => {
      if (!stream || stream.closed) return;
      stream.close();
      // A stream refused or dropped while authenticating was never counted.
      if (!this.streams.delete(stream.conn)) return;
      if (this.streams.size === 0) this.stopCheckingWrites();
      this.services.options.observer.connections(-1);
      for (const [typeUrl, w] of stream.conn.watched) if (w.rejected) this.services.options.observer.rejectCleared(SHORT_TYPE[typeUrl], stream.conn.proxy.id);
      log.info(`closed connection for node:${stream.conn.proxy.id}`);
      this.tellListeners('disconnected', stream.conn);
    };
    call.on('end', () => {
      close();
      call.end();
    });
    call.on('error', () => close());
    call.on('close', () => close());
    call.on('cancelled', () => close());
  }

  /**
   * Authenticates the stream's caller and checks it may act as the proxy it names
   * (XDS_AUTH, PILOT_ENABLE_XDS_IDENTITY_CHECK); registers the stream when it may.
   */
  private async authorize(stream: AdsStream, call: AdsCall, auth: XdsStreamAuth | undefined): Promise<boolean> {
    const { conn } = stream;
    const { logger: log, observer } = this.services.options;
    if (auth) {
      try {
        const caller = await auth.authorize(call, conn.proxy);
        if (caller) conn.identities = caller.identities;
      } catch (err) {
        const e = err instanceof XdsAuthError ? err : new XdsAuthError(grpcLibrary().status.UNAUTHENTICATED, (err as Error).message);
        log.warn(`refusing xDS stream for node:${conn.proxy.id} from ${conn.peer}: ${e.message}`);
        stream.close();
        call.emit('error', { code: e.code, details: e.message });
        return false;
      }
    }
    if (stream.closed) return false;
    this.streams.set(conn, stream);
    this.checkWrites();
    observer.connections(1);
    log.info(`new ${conn.protocol === 'delta' ? 'delta ' : ''}connection for node:${conn.proxy.id}`, {
      peer: conn.peer,
      generator: conn.proxy.generator || 'envoy',
      ...(conn.identities.length > 0 ? { identity: conn.identities.join(',') } : {}),
    });
    this.tellListeners('connected', conn);
    return true;
  }

  private checkWrites(): void {
    if (this.writeChecks) return;
    this.writeChecks = setInterval(() => {
      const now = Date.now();
      for (const s of this.streams.values()) s.checkWrite(now);
    }, WRITE_CHECK_INTERVAL_MS);
    this.writeChecks.unref();
  }

  private stopCheckingWrites(): void {
    clearInterval(this.writeChecks);
    this.writeChecks = undefined;
  }

  private tellListeners(event: 'connected' | 'disconnected', conn: XdsConnection): void {
    for (const listener of this.services.options.connectionListeners ?? []) {
      try {
        listener[event](conn);
      } catch (err) {
        this.services.options.logger.error(`connection listener failed on ${event} of node:${conn.proxy.id}: ${(err as Error).message}`);
      }
    }
  }
}

/** How often open streams' writes are checked: a write times out between WRITE_TIMEOUT_MS and this much later. */
const WRITE_CHECK_INTERVAL_MS = Math.min(1000, WRITE_TIMEOUT_MS);
