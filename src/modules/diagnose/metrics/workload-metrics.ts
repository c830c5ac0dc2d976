import { Duration } from '../../settings/duration';
import { columns } from '../columns';
import { errorRateQuery, latencyQuery, requestRateQuery } from './queries';
import { StoreRequest, vectorValue } from './query-client';

export interface WorkloadMetrics {
  workload: string;
  totalRps: number;
  errorRps: number;
  p50: Duration;
  p90: Duration;
  p99: Duration;
}

/** Milliseconds as the incumbent shows them: whole milliseconds (truncated), in Go's duration form. */
function latency(ms: number): Duration {
  if (!Number.isFinite(ms)) return Duration.ZERO;
  return Duration.fromNanos(BigInt(Math.trunc(ms)) * 1_000_000n);
}

/** The five values of one workload over the window ending `at`. */
export async function workloadMetrics(request: StoreRequest, workload: string, window: Duration, at: Date): Promise<WorkloadMetrics> {
  const value = (query: string) => vectorValue(request, query, at);
  const errors: string[] = [];
  const attempt = async (query: string) => {
    try {
      return await value(query);
    } catch (err) {
      errors.push((err as Error).message);
      return 0;
    }
  };
  const totalRps = await attempt(requestRateQuery(workload, window));
  const errorRps = await attempt(errorRateQuery(workload, window));
  const p50 = await attempt(latencyQuery(workload, window, 0.5));
  const p90 = await attempt(latencyQuery(workload, window, 0.9));
  const p99 = await attempt(latencyQuery(workload, window, 0.99));
  if (errors.length) throw new Error(`could not build metrics for workload '${workload}': error retrieving some metrics: ${errors.join('; ')}`);
  return { workload, totalRps, errorRps, p50: latency(p50), p90: latency(p90), p99: latency(p99) };
}

/** One line of the incumbent's table: right-aligned cells, each its own block (the workload in 40 characters). */
function line(cells: string[]): string {
  return columns([[cells[0].padStart(40), ...cells.slice(1)]], { minWidth: 13, padding: 2, alignRight: true, lastIsColumn: true });
}

export function metricsHeader(): string {
  return line(['WORKLOAD', 'TOTAL RPS', 'ERROR RPS', 'P50 LATENCY', 'P90 LATENCY', 'P99 LATENCY']);
}

export function metricsRow(m: WorkloadMetrics): string {
  return line([m.workload, m.totalRps.toFixed(3), m.errorRps.toFixed(3), String(m.p50), String(m.p90), String(m.p99)]);
}
