/**
 * The bench's own HTTP/1.1 load generator, run in worker processes (load-worker.ts): raw
 * keep-alive sockets writing one pre-built request and reading just enough of the answer
 * (status line, Content-Length or chunked end) to know it is complete, so it costs far less
 * per request than node:http.
 *
 * - closed loop: each connection sends the next request when the answer to the last arrives
 *   (saturation when wrk is missing, and the generator's own ceiling);
 * - open loop (fixed rate): request i is due at start + i/rate whatever the answers do; a due
 *   request waits for a free connection, and its latency counts from when it was due, so a
 *   slow answer is not hidden by sending less (no coordinated omission).
 */
import * as net from 'node:net';

export interface LoadTarget {
  host: string;
  port: number;
  path: string;
  headers: Record<string, string>;
}

export interface LoadJob {
  target: LoadTarget;
  connections: number;
  durationMs: number;
  /** Requests per second of this worker (open loop); absent: closed loop. */
  rate?: number;
  expectStatus: number;
}

export interface LoadResult {
  /** Answers with the expected status (timed). */
  requests: number;
  /** Answers with another status and socket errors (counted, not timed). */
  errors: number;
  statuses: Record<number, number>;
  seconds: number;
  /** Requests that were due but never sent before the end (open loop falling behind). */
  unsent: number;
  latenciesMs: Float64Array;
  /** Open loop: p99 of how late the generator's timer got to due requests (its own precision, not counted in latency). */
  lagP99Ms?: number;
}

function requestBytes(target: LoadTarget): Buffer {
  const lines = [`GET ${target.path} HTTP/1.1`, ...Object.entries({ host: `${target.host}:${target.port}`, ...target.headers }).map(([k, v]) => `${k}: ${v}`)];
  return Buffer.from(lines.join('\r\n') + '\r\n\r\n');
}

/** Finds where one HTTP/1.1 answer ends in `buffer`; -1 while incomplete. */
function answerEnd(buffer: Buffer): { end: number; status: number } | undefined {
  const headEnd = buffer.indexOf('\r\n\r\n');
  if (headEnd < 0) return undefined;
  const head = buffer.toString('latin1', 0, headEnd);
  const status = Number(head.slice(9, 12));
  const length = /\r\ncontent-length:\s*(\d+)/i.exec(head);
  if (length) {
    const end = headEnd + 4 + Number(length[1]);
    return buffer.length >= end ? { end, status } : undefined;
  }
  if (/\r\ntransfer-encoding:\s*chunked/i.test(head)) {
    const last = buffer.indexOf('\r\n0\r\n\r\n', headEnd + 2);
    return last < 0 ? undefined : { end: last + 7, status };
  }
  return { end: headEnd + 4, status };
}

class Connection {
  private readonly socket: net.Socket;
  private pending: Buffer = Buffer.alloc(0);
  private onAnswer?: (status: number) => void;
  busy = false;

  constructor(target: LoadTarget, onError: () => void) {
    this.socket = net.connect({ host: target.host, port: target.port, noDelay: true });
    this.socket.on('data', (chunk: Buffer) => {
      this.pending = this.pending.length === 0 ? chunk : Buffer.concat([this.pending, chunk]);
      const answer = answerEnd(this.pending);
      if (!answer) return;
      this.pending = this.pending.subarray(answer.end);
      const done = this.onAnswer;
      this.onAnswer = undefined;
      this.busy = false;
      done?.(answer.status);
    });
    this.socket.on('error', () => {
      const done = this.onAnswer;
      this.onAnswer = undefined;
      onError();
      done?.(0);
    });
  }

  send(bytes: Buffer, done: (status: number) => void): void {
    this.busy = true;
    this.onAnswer = done;
    this.socket.write(bytes);
  }

  close(): void {
    this.socket.destroy();
  }
}

export function runLoad(job: LoadJob): Promise<LoadResult> {
  const bytes = requestBytes(job.target);
  const latencies: number[] = [];
  const statuses: Record<number, number> = {};
  let errors = 0;
  let broken = false;
  const conns = Array.from({ length: job.connections }, () => new Connection(job.target, () => (broken = true)));
  const start = performance.now();
  const end = start + job.durationMs;
  const record = (dueAt: number) => (status: number) => {
    statuses[status] = (statuses[status] ?? 0) + 1;
    if (status === job.expectStatus) latencies.push(performance.now() - dueAt);
    else errors++;
  };
  return new Promise((resolve) => {
    const finish = (unsent: number, lag: number[] = []) => {
      for (const c of conns) c.close();
      const lagMs = Float64Array.from(lag).sort();
      resolve({ requests: latencies.length, errors, statuses, seconds: (performance.now() - start) / 1000, unsent, latenciesMs: Float64Array.from(latencies).sort(), lagP99Ms: percentile(lagMs, 99) });
    };
    if (job.rate === undefined) {
      let open = conns.length;
      const next = (c: Connection) => {
        if (broken || performance.now() >= end) {
          if (--open === 0) finish(0);
          return;
        }
        const t0 = performance.now();
        c.send(bytes, (status) => {
          record(t0)(status);
          next(c);
        });
      };
      for (const c of conns) next(c);
      return;
    }
    const interval = 1000 / job.rate;
    let sent = 0;
    // When the generator got to each due request: latency counts from there, so waiting for
    // a free connection (a slow proxy) counts and the generator's own timer lateness does not.
    const waiting: number[] = [];
    const lag: number[] = [];
    const dispatch = () => {
      for (const c of conns) {
        if (waiting.length === 0) return;
        if (c.busy) continue;
        const dueAt = waiting.shift()!;
        c.send(bytes, (status) => {
          record(dueAt)(status);
          dispatch();
        });
      }
    };
    const tick = () => {
      const now = performance.now();
      const due = Math.min(Math.floor((Math.min(now, end) - start) / interval), Math.floor(job.durationMs / interval));
      for (; sent < due; sent++) {
        lag.push(now - (start + sent * interval));
        waiting.push(now);
      }
      dispatch();
      if (now < end && !broken) setTimeout(tick, Math.min(1, interval));
      else {
        // Let the last answers arrive (at most 1 s), then report what is still queued as unsent.
        const settle = performance.now() + 1000;
        const wait = () => (conns.some((c) => c.busy) && performance.now() < settle ? setTimeout(wait, 5) : finish(waiting.length, lag));
        wait();
      }
    };
    tick();
  });
}

export function percentile(sorted: Float64Array, p: number): number {
  if (sorted.length === 0) return NaN;
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];
}
