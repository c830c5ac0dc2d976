import { command, durationFlag, NotYetImplementedCommand } from '../../../src/modules/cli';

@command({
  program: 'meshctl',
  path: 'experimental metrics',
  aliases: ['m'],
  summary: 'Print requests per second, error rate and p50/p90/p99 latency of workloads, from server-side reports',
  usage: 'experimental metrics <workload name>...',
  variadic: true,
  flags: { duration: durationFlag('window the rates and latencies are computed over', { char: 'd', default: '1m0s' }) },
})
export class ExperimentalMetrics extends NotYetImplementedCommand {}
