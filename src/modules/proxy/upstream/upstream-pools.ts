/**
 * The router's connections to upstream endpoints: one undici pool per endpoint (and, for a
 * cluster with TLS, per transport and certificate), keeping connections alive across requests.
 *
 * undici, not node:http's client: the http.Agent + ClientRequest path cost about 80 µs of CPU
 * per proxied request against 45–53 µs with an undici pool (bench/proxy, 2 cores), and the
 * upstream client was the largest share of the built-in proxy's work per request.
 */
import * as net from 'node:net';
import * as tls from 'node:tls';
import type { buildConnector, Dispatcher, Pool } from 'undici';
import type { UpstreamTransport } from '../tls/transport-sockets';
import { undiciLibrary } from './undici-library';

export interface UpstreamEndpoint {
  address: string;
  port: number;
}

type Connector = buildConnector.connector;

/** A pool and the sweep during which it was last asked for. */
interface KeptPool {
  pool: Pool;
  usedInSweep: number;
}

/**
 * How often pools nobody asked for are looked for. Endpoints come and go (a pod rescheduled
 * gets a new address); a pool toward one that went would otherwise stay forever.
 */
const IDLE_SWEEP_MS = 30_000;

export class UpstreamPools {
  private readonly plain = new Map<string, KeptPool>();
  /** Per TLS transport: the certificates the pools were made with, and a pool per endpoint. */
  private readonly secure = new Map<UpstreamTransport, { context: tls.SecureContext | undefined; pools: Map<string, KeptPool> }>();
  private sweeps = 0;
  private sweeper: NodeJS.Timeout | undefined;

  constructor(private readonly idleSweepMs = IDLE_SWEEP_MS) {}

  /**
   * The pool toward `endpoint`: plain text, or `transport`'s TLS; undefined while its secrets
   * are not ready. A connection not established within `connectTimeoutMs` (the cluster's
   * connect_timeout) fails its request.
   */
  poolFor(endpoint: UpstreamEndpoint, transport: UpstreamTransport | undefined, connectTimeoutMs: number): Dispatcher | undefined {
    const key = `${endpoint.address}:${endpoint.port}/${connectTimeoutMs}`;
    if (!transport) return this.kept(this.plain, key) ?? this.add(this.plain, key, endpoint, plainConnector(connectTimeoutMs));
    const options = transport.connectOptions();
    if (!options) return undefined;
    let entry = this.secure.get(transport);
    if (entry && entry.context !== options.secureContext) {
      // New certificates: requests in flight finish on the old connections, new ones use the new.
      for (const { pool } of entry.pools.values()) void pool.close().catch(() => undefined);
      entry = undefined;
    }
    if (!entry) {
      entry = { context: options.secureContext, pools: new Map() };
      this.secure.set(transport, entry);
    }
    return this.kept(entry.pools, key) ?? this.add(entry.pools, key, endpoint, tlsConnector(options, connectTimeoutMs));
  }

  /** Pools open now (plain and TLS), for tests and debugging. */
  get size(): number {
    let n = this.plain.size;
    for (const { pools } of this.secure.values()) n += pools.size;
    return n;
  }

  /**
   * Closes and forgets every pool not asked for since the sweep before this one and with no
   * request queued or running: its endpoint has most likely gone. Runs every `idleSweepMs`
   * while pools are open; a pool asked for again later is simply opened again.
   */
  sweep(): void {
    this.sweeps += 1;
    this.closeIdle(this.plain);
    for (const [transport, { pools }] of this.secure) {
      this.closeIdle(pools);
      if (pools.size === 0) this.secure.delete(transport);
    }
    if (this.size === 0) this.stopSweeping();
  }

  close(): void {
    this.stopSweeping();
    for (const { pool } of this.plain.values()) void pool.destroy().catch(() => undefined);
    this.plain.clear();
    for (const { pools } of this.secure.values()) for (const { pool } of pools.values()) void pool.destroy().catch(() => undefined);
    this.secure.clear();
  }

  private kept(pools: Map<string, KeptPool>, key: string): Pool | undefined {
    const kept = pools.get(key);
    if (!kept) return undefined;
    kept.usedInSweep = this.sweeps;
    return kept.pool;
  }

  private add(pools: Map<string, KeptPool>, key: string, endpoint: UpstreamEndpoint, connect: Connector): Pool {
    const host = endpoint.address.includes(':') ? `[${endpoint.address}]` : endpoint.address;
    // The route's timeout governs how long an answer may take (0 = none), not undici's own.
    const pool = new (undiciLibrary().Pool)(`http://${host}:${endpoint.port}`, { connections: null, headersTimeout: 0, bodyTimeout: 0, connect });
    pools.set(key, { pool, usedInSweep: this.sweeps });
    this.sweeper ??= setInterval(() => this.sweep(), this.idleSweepMs).unref();
    return pool;
  }

  private closeIdle(pools: Map<string, KeptPool>): void {
    for (const [key, { pool, usedInSweep }] of pools) {
      if (usedInSweep >= this.sweeps - 1) continue;
      const { pending, running } = pool.stats;
      if (pending > 0 || running > 0) continue;
      pools.delete(key);
      void pool.close().catch(() => undefined);
    }
  }

  private stopSweeping(): void {
    if (this.sweeper) clearInterval(this.sweeper);
    this.sweeper = undefined;
  }
}

/** The code a connection that took longer than the cluster's connect_timeout fails with (undici's own for it). */
export const CONNECT_TIMEOUT_CODE = 'UND_ERR_CONNECT_TIMEOUT';

function plainConnector(timeoutMs: number): Connector {
  return ({ hostname, port }, callback) => {
    const socket = net.connect({ host: unbracketed(hostname), port: Number(port), noDelay: true });
    settleOnce(socket, 'connect', timeoutMs, callback);
  };
}

function tlsConnector(options: tls.ConnectionOptions, timeoutMs: number): Connector {
  return ({ hostname, port }, callback) => {
    const socket = tls.connect({ ...options, host: unbracketed(hostname), port: Number(port) });
    socket.setNoDelay(true);
    settleOnce(socket, 'secureConnect', timeoutMs, callback);
  };
}

/** Hands the socket on once `ready`, or the error it failed with, or a timeout after `timeoutMs` (the socket then destroyed). */
function settleOnce(socket: net.Socket, ready: string, timeoutMs: number, callback: buildConnector.Callback): void {
  const settle = (error: Error | null): void => {
    clearTimeout(timer);
    socket.removeListener(ready, onReady);
    socket.removeListener('error', onError);
    if (error) callback(error, null);
    else callback(null, socket);
  };
  const onError = (error: Error): void => settle(error);
  const onReady = (): void => settle(null);
  const timer = setTimeout(() => {
    const error = Object.assign(new Error(`connect timeout after ${timeoutMs} ms`), { code: CONNECT_TIMEOUT_CODE });
    // Listeners first: destroying must not report a second, unrelated error.
    settle(error);
    socket.destroy();
  }, timeoutMs);
  socket.once(ready, onReady);
  socket.once('error', onError);
}

function unbracketed(hostname: string): string {
  return hostname.startsWith('[') ? hostname.slice(1, -1) : hostname;
}
