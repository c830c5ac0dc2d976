/**
 * Forwarding a query the mesh does not answer to the host's resolvers, over the protocol the
 * client used (a truncated UDP answer is relayed as is: the client then asks again over TCP).
 */
import * as dgram from 'node:dgram';
import * as net from 'node:net';
import type { Upstream } from './resolv-conf';

export interface ForwardResult {
  /** The first upstream answer (raw bytes), undefined when every upstream failed. */
  response?: Buffer;
  /** Why each failed upstream failed, `host:port: reason`. */
  failures: string[];
}

export interface ForwarderOptions {
  upstreams: readonly Upstream[];
  /** DNS_FORWARD_PARALLEL: ask every upstream at once and take the first answer. */
  parallel: boolean;
  /** How long one upstream has to answer. */
  timeoutMs: number;
}

export class UpstreamForwarder {
  constructor(private readonly options: ForwarderOptions) {}

  get upstreams(): readonly Upstream[] {
    return this.options.upstreams;
  }

  forward(query: Buffer, protocol: 'udp' | 'tcp'): Promise<ForwardResult> {
    return this.options.parallel ? this.inParallel(query, protocol) : this.oneAfterAnother(query, protocol);
  }

  private async oneAfterAnother(query: Buffer, protocol: 'udp' | 'tcp'): Promise<ForwardResult> {
    const failures: string[] = [];
    for (const upstream of this.options.upstreams) {
      try {
        return { response: await exchange(query, upstream, protocol, this.options.timeoutMs), failures };
      } catch (e) {
        failures.push(`${formatUpstream(upstream)}: ${(e as Error).message}`);
      }
    }
    return { failures };
  }

  private async inParallel(query: Buffer, protocol: 'udp' | 'tcp'): Promise<ForwardResult> {
    const failures: string[] = [];
    const abort = new AbortController();
    const attempts = this.options.upstreams.map((upstream) =>
      exchange(query, upstream, protocol, this.options.timeoutMs, abort.signal).catch((e: Error) => {
        failures.push(`${formatUpstream(upstream)}: ${e.message}`);
        throw e;
      }),
    );
    try {
      return { response: await Promise.any(attempts), failures };
    } catch {
      return { failures };
    } finally {
      abort.abort(); // the slower upstreams' sockets
    }
  }
}

export function formatUpstream(u: Upstream): string {
  return net.isIPv6(u.host) ? `[${u.host}]:${u.port}` : `${u.host}:${u.port}`;
}

/** One query to one upstream: its answer with the query's ID, or an error after `timeoutMs`. */
export function exchange(query: Buffer, upstream: Upstream, protocol: 'udp' | 'tcp', timeoutMs: number, signal?: AbortSignal): Promise<Buffer> {
  return protocol === 'udp' ? exchangeUdp(query, upstream, timeoutMs, signal) : exchangeTcp(query, upstream, timeoutMs, signal);
}

function exchangeUdp(query: Buffer, upstream: Upstream, timeoutMs: number, signal?: AbortSignal): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const socket = dgram.createSocket(net.isIPv6(upstream.host) ? 'udp6' : 'udp4');
    const id = query.readUInt16BE(0);
    const done = settle(() => socket.close(), timeoutMs, signal, resolve, reject);
    socket.on('error', (e) => done(e));
    socket.on('message', (msg) => {
      // A connected socket only hears from the upstream; a stray late answer has another ID.
      if (msg.length >= 12 && msg.readUInt16BE(0) === id) done(undefined, msg);
    });
    // Connected, so an upstream with nothing listening fails at once (ICMP port unreachable).
    socket.connect(upstream.port, upstream.host, () => socket.send(query, (e) => e && done(e)));
  });
}

function exchangeTcp(query: Buffer, upstream: Upstream, timeoutMs: number, signal?: AbortSignal): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const socket = net.connect({ host: upstream.host, port: upstream.port });
    const done = settle(() => socket.destroy(), timeoutMs, signal, resolve, reject);
    let buffered = Buffer.alloc(0);
    socket.on('error', (e) => done(e));
    socket.on('connect', () => {
      const length = Buffer.alloc(2);
      length.writeUInt16BE(query.length);
      socket.write(Buffer.concat([length, query]));
    });
    socket.on('data', (chunk: Buffer) => {
      buffered = Buffer.concat([buffered, chunk]);
      if (buffered.length < 2) return;
      const length = buffered.readUInt16BE(0);
      if (buffered.length >= 2 + length) done(undefined, buffered.subarray(2, 2 + length));
    });
    socket.on('end', () => done(new Error('connection closed before a complete answer')));
  });
}

/** One-shot completion: clears the timer, closes the socket, settles the promise once. */
function settle(
  close: () => void,
  timeoutMs: number,
  signal: AbortSignal | undefined,
  resolve: (b: Buffer) => void,
  reject: (e: Error) => void,
): (error: Error | undefined, answer?: Buffer) => void {
  let settled = false;
  const onAbort = () => done(new Error('another upstream answered first'));
  const timer = setTimeout(() => done(new Error(`no answer within ${timeoutMs} ms`)), timeoutMs);
  signal?.addEventListener('abort', onAbort, { once: true });
  function done(error: Error | undefined, answer?: Buffer): void {
    if (settled) return;
    settled = true;
    clearTimeout(timer);
    signal?.removeEventListener('abort', onAbort);
    try {
      close();
    } catch {
      // already closed
    }
    if (error) reject(error);
    else resolve(answer!);
  }
  if (signal?.aborted) onAbort();
  return done;
}
