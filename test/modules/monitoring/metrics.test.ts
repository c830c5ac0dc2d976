import { expect } from 'chai';
import { DaemonMetrics } from '../../../src/modules/monitoring';

// Every metric of the control-plane core and JWT key-set resolver, with its spec kind mapped to the Prometheus type.
const EXPECTED: Record<string, 'counter' | 'gauge' | 'histogram'> = {
  pilot_xds: 'gauge',
  pilot_xds_pushes: 'counter',
  pilot_xds_push_time: 'histogram',
  pilot_xds_send_time: 'histogram',
  pilot_xds_config_size_bytes: 'histogram',
  pilot_proxy_convergence_time: 'histogram',
  pilot_proxy_queue_time: 'histogram',
  pilot_debounce_time: 'histogram',
  pilot_pushcontext_init_seconds: 'histogram',
  pilot_push_triggers: 'counter',
  pilot_inbound_updates: 'counter',
  pilot_xds_expired_nonce: 'counter',
  pilot_total_xds_rejects: 'counter',
  pilot_xds_cds_reject: 'gauge',
  pilot_xds_eds_reject: 'gauge',
  pilot_xds_lds_reject: 'gauge',
  pilot_xds_rds_reject: 'gauge',
  pilot_total_xds_internal_errors: 'counter',
  pilot_xds_write_timeout: 'counter',
  pilot_xds_shared_encodings: 'counter',
  pilot_total_rejected_configs: 'counter',
  pilot_services: 'gauge',
  pilot_virt_services: 'gauge',
  pilot_conflict_outbound_listener_tcp_over_current_tcp: 'gauge',
  pilot_conflict_inbound_listener: 'gauge',
  pilot_duplicate_envoy_clusters: 'gauge',
  pilot_eds_no_instances: 'gauge',
  pilot_destrule_subsets: 'gauge',
  pilot_vservice_dup_domain: 'gauge',
  xds_cache_reads: 'counter',
  xds_cache_evictions: 'counter',
  xds_cache_size: 'gauge',
  xds_cache_dependent_config_size: 'gauge',
  meshd_uptime_seconds: 'gauge',
  mesh_build: 'gauge',
  pilot_info: 'gauge',
  startup_duration_seconds: 'gauge',
  // The key-set resolver's counters: their spec names end in _total.
  pilot_jwks_resolver_network_fetch_success_total: 'counter',
  pilot_jwks_resolver_network_fetch_fail_total: 'counter',
};

function sample(text: string, series: string): number | undefined {
  const line = text.split('\n').find((l) => l.startsWith(`${series} `));
  return line === undefined ? undefined : Number(line.slice(series.length + 1));
}

describe('monitoring: DaemonMetrics', () => {
  it('exports every catalogued metric with HELP and the spec kind as TYPE', async () => {
    const text = await new DaemonMetrics({ component: 'pilot-discovery', version: '1.2.3' }).metrics();
    for (const [name, type] of Object.entries(EXPECTED)) {
      expect(text, name).to.match(new RegExp(`^# HELP ${name} \\S`, 'm'));
      expect(text, name).to.include(`\n# TYPE ${name} ${type}\n`);
    }
    // Counters keep the spec's names: no `_total` suffix.
    expect(text).not.to.include('pilot_xds_pushes_total');
  });

  it('registers the default Node process metrics on its own registry', async () => {
    const text = await new DaemonMetrics({ component: 'pilot-discovery', version: '1.2.3' }).metrics();
    expect(text).to.include('# TYPE process_cpu_user_seconds_total counter');
    expect(text).to.include('# TYPE nodejs_heap_size_total_bytes gauge');
  });

  it('reports build info, uptime and the startup duration', async () => {
    let now = 1_000_000;
    const metrics = new DaemonMetrics({ component: 'pilot-discovery', version: '1.2.3', startTime: 990_000, now: () => now });
    let text = await metrics.metrics();
    expect(sample(text, 'mesh_build{component="pilot-discovery",tag="1.2.3"}')).to.equal(1);
    expect(sample(text, 'pilot_info{version="1.2.3"}')).to.equal(1);
    expect(sample(text, 'meshd_uptime_seconds')).to.equal(10);
    expect(sample(text, 'startup_duration_seconds')).to.equal(0);

    expect(metrics.markReady()).to.equal(10);
    now += 5_000;
    expect(metrics.markReady(), 'set once').to.equal(10);
    text = await metrics.metrics();
    expect(sample(text, 'meshd_uptime_seconds')).to.equal(15);
    expect(sample(text, 'startup_duration_seconds')).to.equal(10);
  });

  it('records labelled values through the typed fields', async () => {
    const metrics = new DaemonMetrics({ component: 'pilot-discovery', version: '1.2.3' });
    metrics.xdsPushes.inc({ type: 'cds' });
    metrics.xdsPushes.inc({ type: 'cds_senderr' }, 2);
    metrics.xdsClients.set({ version: '1.2.3' }, 4);
    metrics.xdsReject('lds').set({ node: 'sidecar~10.0.0.1~a.default~default.svc.cluster.local', err: 'bad listener' }, 1);
    metrics.xdsConfigSize.observe({ type: 'eds' }, 5000);
    metrics.xdsCacheReads.inc({ type: 'hit' });
    metrics.services.set(7);
    const text = await metrics.metrics();
    expect(sample(text, 'pilot_xds_pushes{type="cds"}')).to.equal(1);
    expect(sample(text, 'pilot_xds_pushes{type="cds_senderr"}')).to.equal(2);
    expect(sample(text, 'pilot_xds{version="1.2.3"}')).to.equal(4);
    expect(sample(text, 'pilot_xds_lds_reject{node="sidecar~10.0.0.1~a.default~default.svc.cluster.local",err="bad listener"}')).to.equal(1);
    expect(sample(text, 'xds_cache_reads{type="hit"}')).to.equal(1);
    expect(sample(text, 'pilot_services')).to.equal(7);
    // Byte buckets for config sizes.
    expect(sample(text, 'pilot_xds_config_size_bytes_bucket{le="1",type="eds"}')).to.equal(0);
    expect(sample(text, 'pilot_xds_config_size_bytes_bucket{le="10000",type="eds"}')).to.equal(1);
    expect(text).to.include('pilot_xds_config_size_bytes_bucket{le="40000000",type="eds"} 1');
  });

  it('lets two instances live in one process without sharing values', async () => {
    const a = new DaemonMetrics({ component: 'pilot-discovery', version: 'a' });
    const b = new DaemonMetrics({ component: 'pilot-discovery', version: 'b' });
    a.pushTriggers.inc({ type: 'config' }, 3);
    b.pushTriggers.inc({ type: 'config' });
    const [textA, textB] = await Promise.all([a.metrics(), b.metrics()]);
    expect(sample(textA, 'pilot_push_triggers{type="config"}')).to.equal(3);
    expect(sample(textB, 'pilot_push_triggers{type="config"}')).to.equal(1);
    expect(sample(textA, 'pilot_info{version="a"}')).to.equal(1);
    expect(sample(textA, 'pilot_info{version="b"}')).to.equal(undefined);
  });
});
