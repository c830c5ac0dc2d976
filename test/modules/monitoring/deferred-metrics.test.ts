import { expect } from 'chai';
import { DaemonMetrics, DeferredMetrics, labelsOf } from '../../../src/modules/monitoring';
import { Counter, Gauge, Histogram, Registry } from '../../../src/modules/shared/prom-client';

function sample(text: string, series: string): number | undefined {
  const line = text.split('\n').find((l) => l.startsWith(`${series} `));
  return line === undefined ? undefined : Number(line.slice(series.length + 1));
}

describe('monitoring: DeferredMetrics', () => {
  it('holds push-path observations until the metrics are read, and a scrape sees every one', async () => {
    const metrics = new DaemonMetrics({ component: 'pilot-discovery', version: '1.2.3' });
    const eds = labelsOf('type')('eds');
    for (let i = 0; i < 2000; i++) {
      metrics.deferred.inc(metrics.xdsPushes, eds);
      metrics.deferred.observe(metrics.xdsConfigSize, eds, 5000);
      metrics.deferred.observe(metrics.proxyConvergenceTime, undefined, 0.05);
    }
    expect(metrics.deferred.pending).to.equal(6000);
    const text = await metrics.metrics();
    expect(metrics.deferred.pending, 'folded in by the scrape').to.equal(0);
    expect(sample(text, 'pilot_xds_pushes{type="eds"}')).to.equal(2000);
    expect(sample(text, 'pilot_xds_config_size_bytes_count{type="eds"}')).to.equal(2000);
    expect(sample(text, 'pilot_xds_config_size_bytes_bucket{le="10000",type="eds"}')).to.equal(2000);
    expect(sample(text, 'pilot_proxy_convergence_time_count')).to.equal(2000);
    expect(sample(text, 'pilot_proxy_convergence_time_sum')).to.be.closeTo(100, 1e-6);
  });

  it('folds in on a direct read of one metric too (its collect hook)', async () => {
    const metrics = new DaemonMetrics({ component: 'pilot-discovery', version: '1.2.3' });
    metrics.deferred.inc(metrics.xdsSharedEncodings, { type: 'cds', result: 'reused' }, 3);
    const value = await metrics.xdsSharedEncodings.get();
    expect(value.values.map((v) => [v.labels, v.value])).to.deep.equal([[{ type: 'cds', result: 'reused' }, 3]]);
  });

  it('sums counter increments per label object, keeping label sets apart', async () => {
    const registry = new Registry();
    const deferred = new DeferredMetrics();
    const counter = new Counter({ name: 'c', help: 'h', labelNames: ['type'], registers: [registry], collect: () => deferred.flush() });
    const ofType = labelsOf('type');
    expect(ofType('cds'), 'one object per value').to.equal(ofType('cds'));
    for (let i = 0; i < 5; i++) deferred.inc(counter, ofType('cds'));
    deferred.inc(counter, ofType('eds'), 7);
    const text = await registry.metrics();
    expect(sample(text, 'c{type="cds"}')).to.equal(5);
    expect(sample(text, 'c{type="eds"}')).to.equal(7);
  });

  it('keeps only the latest value of a gauge per label set, and a scrape sees it (xds_cache_size)', async () => {
    const metrics = new DaemonMetrics({ component: 'pilot-discovery', version: '1.2.3' });
    const ofType = labelsOf('type');
    for (let size = 1; size <= 5000; size++) metrics.deferred.set(metrics.xdsCacheSize, ofType('rds'), size);
    metrics.deferred.set(metrics.xdsCacheSize, ofType('eds'), 7);
    expect(metrics.deferred.pending, 'one value per label set').to.equal(2);
    const text = await metrics.metrics();
    expect(metrics.deferred.pending).to.equal(0);
    expect(sample(text, 'xds_cache_size{type="rds"}')).to.equal(5000);
    expect(sample(text, 'xds_cache_size{type="eds"}')).to.equal(7);
  });

  it('sets a gauge by itself after its delay, without a read', async () => {
    const registry = new Registry();
    const deferred = new DeferredMetrics(20);
    const gauge = new Gauge({ name: 'g', help: 'h', registers: [registry] });
    deferred.set(gauge, undefined, 3);
    await new Promise((r) => setTimeout(r, 60));
    expect(deferred.pending).to.equal(0);
    expect(sample(await registry.metrics(), 'g')).to.equal(3);
  });

  it('folds in by itself after its delay, without a read', async () => {
    const registry = new Registry();
    const deferred = new DeferredMetrics(20);
    const histogram = new Histogram({ name: 'h', help: 'h', buckets: [1], registers: [registry] });
    deferred.observe(histogram, undefined, 0.5);
    expect(deferred.pending).to.equal(1);
    await new Promise((r) => setTimeout(r, 60));
    expect(deferred.pending).to.equal(0);
    expect(sample(await registry.metrics(), 'h_count')).to.equal(1);
  });

  it('holds a bounded number of observations: the one past the limit folds all of them in at once', () => {
    const deferred = new DeferredMetrics(60_000, 100);
    const histogram = new Histogram({ name: 'bounded', help: 'h', buckets: [1], registers: [] });
    for (let i = 0; i < 99; i++) deferred.observe(histogram, undefined, 1);
    expect(deferred.pending).to.equal(99);
    deferred.observe(histogram, undefined, 1);
    expect(deferred.pending).to.equal(0);
  });

  it('keeps an observation made while it folds in (a collect hook that reads again)', async () => {
    const registry = new Registry();
    const deferred = new DeferredMetrics();
    let extra = true;
    const counter = new Counter({
      name: 'reentrant',
      help: 'h',
      registers: [registry],
      collect: () => {
        deferred.flush();
        if (extra) {
          extra = false;
          deferred.inc(counter, undefined, 10);
        }
      },
    });
    deferred.inc(counter, undefined, 1);
    expect(sample(await registry.metrics(), 'reentrant')).to.equal(1);
    expect(sample(await registry.metrics(), 'reentrant')).to.equal(11);
  });
});
