/**
 * `x metrics` values from a metrics store holding real samples: request and error rates and
 * latency quantiles of server-side reports over the window, the incumbent's table, and the
 * errors (a query the store refuses, no metrics store pod).
 */
import * as fs from 'node:fs';
import * as http from 'node:http';
import * as os from 'node:os';
import * as path from 'node:path';
import { expect } from 'chai';
import { findMetricsStore, metricsHeader, metricsRow, StoreRequest, workloadMetrics } from '../../../src/modules/diagnose';
import { OrchClient } from '../../../src/modules/orch';
import { Duration } from '../../../src/modules/settings/duration';
import { MetricsStore, startMetricsStore } from '../../helpers/metrics-store';
import { OrchApiServer, startOrchApiServer } from '../../helpers/orch-api';
import { runPod } from '../../helpers/orch-mesh';
import { runCli } from '../../helpers/run-cli';
import { orchClient, runningPod } from './support';

const T = 1_700_000_000;

/** A counter growing `perSecond` from 0 at `from`, sampled every 5 s for `count` samples. */
function linear(perSecond: number, from = T - 60, count = 13): [number, number][] {
  return Array.from({ length: count }, (_, i) => [from + i * 5, perSecond * i * 5] as [number, number]);
}

/** Straight to the store, as the port-forward would carry it. */
function direct(store: MetricsStore): StoreRequest {
  return (p) =>
    new Promise((resolve, reject) => {
      http.get({ host: store.host, port: store.port, path: p }, (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks) }));
      }).on('error', reject);
    });
}

/** reviews-v1 of shop: 9 ok and 1 failed request per second, latencies in the 10/50/100/+Inf ms buckets. */
function addReviewsSamples(store: MetricsStore, samples: (perSecond: number) => [number, number][]): void {
  const dest = { destination_workload: 'reviews-v1', destination_workload_namespace: 'shop', reporter: 'destination' };
  store.add({ __name__: 'mesh_requests_total', ...dest, response_code: '200' }, samples(9));
  store.add({ __name__: 'mesh_requests_total', ...dest, response_code: '503' }, samples(1));
  // The client side's reports and other workloads are not counted.
  store.add({ __name__: 'mesh_requests_total', ...dest, reporter: 'source', response_code: '200' }, samples(100));
  store.add({ __name__: 'mesh_requests_total', ...dest, destination_workload: 'ratings-v1', response_code: '500' }, samples(50));
  for (const [le, rate] of [['10', 4], ['50', 8], ['100', 9.5], ['+Inf', 10]] as const) {
    store.add({ __name__: 'mesh_request_duration_milliseconds_bucket', ...dest, le }, samples(rate));
  }
}

describe('diagnose: x metrics from the metrics store query API', function () {
  this.timeout(20_000);
  let store: MetricsStore;

  before(async () => {
    store = await startMetricsStore();
    addReviewsSamples(store, (rate) => linear(rate));
  });
  after(() => store?.stop());

  it('computes rates and p50/p90/p99 of server-side reports over the window, and prints the incumbent table', async () => {
    const m = await workloadMetrics(direct(store), 'reviews-v1.shop', Duration.parse('1m0s'), new Date(T * 1000));
    expect([m.totalRps, m.errorRps, String(m.p50), String(m.p90), String(m.p99)]).to.deep.equal([10, 1, '20ms', '83ms', '100ms']);
    expect(store.queries.slice(-5)).to.deep.equal([
      'sum(rate(mesh_requests_total{destination_workload=~"reviews-v1.*", destination_workload_namespace=~"shop.*",reporter="destination"}[1m0s]))',
      'sum(rate(mesh_requests_total{destination_workload=~"reviews-v1.*", destination_workload_namespace=~"shop.*",reporter="destination",response_code=~"[45][0-9]{2}"}[1m0s]))',
      'histogram_quantile(0.500000, sum(rate(mesh_request_duration_milliseconds_bucket{destination_workload=~"reviews-v1.*", destination_workload_namespace=~"shop.*",reporter="destination"}[1m0s])) by (le))',
      'histogram_quantile(0.900000, sum(rate(mesh_request_duration_milliseconds_bucket{destination_workload=~"reviews-v1.*", destination_workload_namespace=~"shop.*",reporter="destination"}[1m0s])) by (le))',
      'histogram_quantile(0.990000, sum(rate(mesh_request_duration_milliseconds_bucket{destination_workload=~"reviews-v1.*", destination_workload_namespace=~"shop.*",reporter="destination"}[1m0s])) by (le))',
    ]);
    expect(metricsHeader()).to.equal(`  ${'WORKLOAD'.padStart(40)}    TOTAL RPS    ERROR RPS  P50 LATENCY  P90 LATENCY  P99 LATENCY\n`);
    expect(metricsRow(m)).to.equal(`  ${'reviews-v1.shop'.padStart(40)}       10.000        1.000         20ms         83ms        100ms\n`);
  });

  it('gives zeros for a workload without traffic in the window; a window the samples stop inside of sees less', async () => {
    const none = await workloadMetrics(direct(store), 'details-v1', Duration.parse('1m0s'), new Date(T * 1000));
    expect(metricsRow(none)).to.equal(`  ${'details-v1'.padStart(40)}        0.000        0.000           0s           0s           0s\n`);
    const later = await workloadMetrics(direct(store), 'reviews-v1', Duration.parse('30s'), new Date((T + 20) * 1000));
    // Only the samples at T-5 and T are in (T-10, T+20]: as Prometheus does, the increase between
    // them (10/s over 5 s) is extrapolated 5 s back and half a sample interval on: 50 * 12.5/5 over 30 s.
    expect(later.totalRps).to.be.closeTo(125 / 30, 1e-9);
  });

  it('fails naming the workload and the query when the store refuses it', async () => {
    let error: Error | undefined;
    await workloadMetrics(direct(store), 'reviews-v1', Duration.parse('1.5s'), new Date(T * 1000)).catch((e: Error) => (error = e));
    expect(error?.message).to.match(/^could not build metrics for workload 'reviews-v1': error retrieving some metrics: query 'sum\(rate\(mesh_requests_total\{.*\}\[1\.5s\]\)\)' failed: bad_data: invalid duration "1\.5s"/);
  });

  describe('finding the metrics store pod', () => {
    let server: OrchApiServer;
    let client: OrchClient;
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'mesh-metrics-'));

    before(async () => {
      server = await startOrchApiServer({ simulateCluster: false });
      await server.create({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'mesh-system' } });
      client = orchClient(server.writeKubeconfigFile(dir));
    });
    after(async () => {
      client?.stop();
      await server?.stop();
      fs.rmSync(dir, { recursive: true, force: true });
    });

    it('says so when no metrics store pod runs in the mesh namespace, and finds a running one by its label', async () => {
      let error: Error | undefined;
      await findMetricsStore(client, 'mesh-system').catch((e: Error) => (error = e));
      expect(error?.message).to.equal('no metrics store pod (label app=metrics-store) is running in namespace mesh-system; install the metrics store add-on, or name its namespace with --meshNamespace');
      await runningPod(server, { metadata: { name: 'metrics-store-0', namespace: 'mesh-system', labels: { app: 'metrics-store' } }, spec: { containers: [{ name: 'store', image: 'store' }] } });
      expect((await findMetricsStore(client, 'mesh-system')).metadata?.name).to.equal('metrics-store-0');
    });
  });

  describe('through meshctl, the store reached by port-forward to its pod', () => {
    let server: OrchApiServer;
    let live: MetricsStore;
    let kubeconfig: string;
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'mesh-metrics-cli-'));

    before(async () => {
      live = await startMetricsStore();
      // Samples every 5 s from two minutes before now to two minutes after: whenever the command
      // asks in that time, its window holds a full minute of them.
      const now = Math.floor(Date.now() / 1000);
      addReviewsSamples(live, (rate) => linear(rate, now - 120, 49));
      server = await startOrchApiServer({ simulateCluster: false });
      await runPod(server, { name: 'metrics-store-0', namespace: 'mesh-system', labels: { app: 'metrics-store' }, ports: { 9090: live.port } });
      kubeconfig = server.writeKubeconfigFile(dir);
    });
    after(async () => {
      await server?.stop();
      await live?.stop();
      fs.rmSync(dir, { recursive: true, force: true });
    });

    it('prints the header and a row per workload, over --duration', async () => {
      const r = await runCli('meshctl', ['experimental', 'metrics', 'reviews-v1.shop', 'details-v1', '-d', '2m', '--orchconfig', kubeconfig]);
      expect(r.stderr).to.equal('');
      expect(r.code).to.equal(0);
      expect(r.stdout).to.equal(
        `  ${'WORKLOAD'.padStart(40)}    TOTAL RPS    ERROR RPS  P50 LATENCY  P90 LATENCY  P99 LATENCY\n` +
          `  ${'reviews-v1.shop'.padStart(40)}       10.000        1.000         20ms         83ms        100ms\n` +
          `  ${'details-v1'.padStart(40)}        0.000        0.000           0s           0s           0s\n`,
      );
      expect(live.queries[0]).to.equal('sum(rate(mesh_requests_total{destination_workload=~"reviews-v1.*", destination_workload_namespace=~"shop.*",reporter="destination"}[2m0s]))');
      expect(live.queries).to.have.length(10);
    });

    it('fails without a workload, and when no metrics store runs in --meshNamespace', async () => {
      const none = await runCli('meshctl', ['x', 'm', '--orchconfig', kubeconfig]);
      expect([none.code, none.stderr.trim()]).to.deep.equal([1, 'Error: metrics requires a workload name: experimental metrics <workload name>[.<namespace>]...']);
      const elsewhere = await runCli('meshctl', ['x', 'metrics', 'reviews-v1', '-i', 'monitoring', '--orchconfig', kubeconfig]);
      expect([elsewhere.code, elsewhere.stdout]).to.deep.equal([1, '']);
      expect(elsewhere.stderr.trim()).to.equal('Error: no metrics store pod (label app=metrics-store) is running in namespace monitoring; install the metrics store add-on, or name its namespace with --meshNamespace');
    });

    it('fails naming the workload when the store cannot be reached or refuses the query', async () => {
      const refused = await runCli('meshctl', ['x', 'metrics', 'reviews-v1', '-d', '1500ms', '--orchconfig', kubeconfig]);
      expect(refused.code).to.equal(1);
      expect(refused.stderr).to.match(/^Error: could not build metrics for workload 'reviews-v1': error retrieving some metrics: query '.*\[1\.5s\]\)\)' failed: bad_data: invalid duration "1\.5s"/);
      server.portForward.unregister('mesh-system', 'metrics-store-0', 9090);
      const closed = await runCli('meshctl', ['x', 'metrics', 'reviews-v1', '--orchconfig', kubeconfig]);
      expect(closed.code).to.equal(1);
      expect(closed.stderr).to.contain('port 9090 of pod metrics-store-0 in namespace mesh-system');
    });
  });
});
