import { command, durationFlag, MeshCommand } from '../../../src/modules/cli';
import { findMetricsStore, metricsHeader, metricsRow, METRICS_STORE_PORT, StoreRequest, workloadMetrics } from '../../../src/modules/diagnose';
import { MeshctlOrchFlags } from '../../../src/modules/orch-access';
import { withOrchAccess } from '../orch-access-scope';

@command({
  program: 'meshctl',
  path: 'experimental metrics',
  aliases: ['m'],
  summary: 'Print requests per second, error rate and p50/p90/p99 latency of workloads, from server-side reports',
  usage: 'experimental metrics <workload name>...',
  variadic: true,
  flags: { duration: durationFlag('window the rates and latencies are computed over', { char: 'd', default: '1m0s' }) },
})
export class ExperimentalMetrics extends MeshCommand {
  async run(): Promise<void> {
    const { flags, argv } = await this.parse(ExperimentalMetrics);
    const workloads = (argv as string[]).filter((a) => a !== '');
    if (workloads.length === 0) this.fail('metrics requires a workload name: experimental metrics <workload name>[.<namespace>]...');
    if (flags.duration.nanos <= 0n) this.fail(`--duration must be positive, got ${flags.duration}`);
    await withOrchAccess(this.scope, flags as MeshctlOrchFlags, async (access) => {
      const store = await findMetricsStore(access.client, flags.meshNamespace);
      const request: StoreRequest = (path) => access.forwarder.request(store, METRICS_STORE_PORT, { method: 'GET', path });
      process.stdout.write(metricsHeader());
      for (const workload of workloads) {
        let row: string;
        try {
          row = metricsRow(await workloadMetrics(request, workload, flags.duration, new Date()));
        } catch (err) {
          this.fail((err as Error).message);
        }
        process.stdout.write(row);
      }
    });
  }
}
