/**
 * A closed-loop HTTP load generator: `connections` keep-alive connections each sending the
 * next request as soon as the previous answer is read, for `durationMs`. Records every
 * latency, so percentiles are exact.
 */
import * as http from 'node:http';

export interface LoadTarget {
  host: string;
  port: number;
  path: string;
  headers: Record<string, string>;
}

export interface LoadResult {
  requests: number;
  /** Answers with another status than expected (counted, not timed). */
  errors: number;
  statuses: Record<number, number>;
  seconds: number;
  latenciesMs: Float64Array;
}

export async function runLoad(target: LoadTarget, connections: number, durationMs: number, expectStatus = 200): Promise<LoadResult> {
  const agent = new http.Agent({ keepAlive: true, maxSockets: connections });
  const latencies: number[] = [];
  const statuses: Record<number, number> = {};
  let errors = 0;
  const start = performance.now();
  const end = start + durationMs;
  const one = () =>
    new Promise<void>((resolve) => {
      const t0 = performance.now();
      const req = http.request({ host: target.host, port: target.port, path: target.path, headers: target.headers, agent }, (res) => {
        res.resume();
        res.on('end', () => {
          const status = res.statusCode ?? 0;
          statuses[status] = (statuses[status] ?? 0) + 1;
          if (status === expectStatus) latencies.push(performance.now() - t0);
          else errors++;
          resolve();
        });
      });
      req.on('error', () => {
        errors++;
        resolve();
      });
      req.end();
    });
  await Promise.all(
    Array.from({ length: connections }, async () => {
      while (performance.now() < end) await one();
    }),
  );
  agent.destroy();
  const seconds = (performance.now() - start) / 1000;
  return { requests: latencies.length, errors, statuses, seconds, latenciesMs: Float64Array.from(latencies).sort() };
}

export function percentile(sorted: Float64Array, p: number): number {
  if (sorted.length === 0) return NaN;
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];
}
