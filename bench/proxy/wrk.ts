/**
 * Saturation with `wrk` (Debian package `wrk`, a native closed-loop generator that is not
 * the bottleneck here): its requests/s and its latency distribution (`--latency`).
 */
import { execFile, spawnSync } from 'node:child_process';
import type { LoadTarget } from './load';

export interface WrkResult {
  rps: number;
  p50: number;
  p99: number;
  /** Non-2xx/3xx answers plus socket errors. */
  errors: number;
  requests: number;
}

export function wrkAvailable(): boolean {
  return spawnSync('wrk', ['--version']).error === undefined;
}

const UNIT_MS: Record<string, number> = { us: 0.001, ms: 1, s: 1000, m: 60_000 };

function latencyMs(output: string, percent: number): number {
  const m = new RegExp(`^\\s*${percent}%\\s+([\\d.]+)(us|ms|s|m)\\s*$`, 'm').exec(output);
  if (!m) throw new Error(`wrk printed no ${percent}% latency:\n${output}`);
  return Number(m[1]) * UNIT_MS[m[2]];
}

export function runWrk(target: LoadTarget, opts: { threads: number; connections: number; seconds: number }): Promise<WrkResult> {
  const headers = Object.entries(target.headers).flatMap(([k, v]) => ['-H', `${k}: ${v}`]);
  const args = ['-t', String(opts.threads), '-c', String(opts.connections), '-d', `${opts.seconds}s`, '--latency', ...headers, `http://${target.host}:${target.port}${target.path}`];
  return new Promise((resolve, reject) => {
    execFile('wrk', args, { timeout: (opts.seconds + 30) * 1000 }, (err, stdout, stderr) => {
      if (err) return reject(new Error(`wrk failed: ${err.message}\n${stderr}`));
      const rps = /Requests\/sec:\s+([\d.]+)/.exec(stdout);
      const total = /(\d+) requests in/.exec(stdout);
      if (!rps || !total) return reject(new Error(`unexpected wrk output:\n${stdout}`));
      const non2xx = Number(/Non-2xx or 3xx responses:\s+(\d+)/.exec(stdout)?.[1] ?? 0);
      const socket = /Socket errors: connect (\d+), read (\d+), write (\d+), timeout (\d+)/.exec(stdout);
      const socketErrors = socket ? socket.slice(1).reduce((s, n) => s + Number(n), 0) : 0;
      resolve({ rps: Number(rps[1]), requests: Number(total[1]), p50: latencyMs(stdout, 50), p99: latencyMs(stdout, 99), errors: non2xx + socketErrors });
    });
  });
}
