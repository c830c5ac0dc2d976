import { expect } from 'chai';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { resourcesOf, sidecarNode, SotwClient } from '../../helpers/ads-client';
import { startDaemon } from '../../helpers/daemon';
import { httpGet, metricValue } from '../../helpers/http';
import { REPO_ROOT, runCli } from '../../helpers/run-cli';

const CDS = 'type.googleapis.com/envoy.config.cluster.v3.Cluster';

function tempDir(): string {
  return fs.mkdtempSync(path.join(os.tmpdir(), 'mesh-daemon-'));
}

describe('pilot-discovery discovery', function () {
  this.timeout(30_000);

  it('serves the bundled samples: /ready, /metrics with the spec names, debug pages', async () => {
    const daemon = await startDaemon(['--configDir', path.join(REPO_ROOT, 'samples', 'config')]);
    try {
      const ready = await httpGet(daemon.httpPort, '/ready');
      expect(ready.status).to.equal(200);
      const metrics = (await httpGet(daemon.monitoringPort, '/metrics')).body;
      for (const name of ['pilot_services', 'pilot_virt_services', 'pilot_xds', 'pilot_xds_pushes', 'pilot_total_rejected_configs', 'meshd_uptime_seconds', 'mesh_build', 'pilot_info', 'startup_duration_seconds', 'pilot_pushcontext_init_seconds', 'xds_cache_size']) {
        expect(metrics, name).to.match(new RegExp(`^# TYPE ${name} `, 'm'));
      }
      expect(metricValue(metrics, 'pilot_services')).to.be.greaterThan(0);
      expect(metricValue(metrics, 'startup_duration_seconds')).to.be.greaterThan(0);

      const configz = JSON.parse((await httpGet(daemon.httpPort, '/debug/configz')).body) as Record<string, unknown>;
      expect(JSON.stringify(configz)).to.contain('ServiceEntry');
      const registryz = (await httpGet(daemon.httpPort, '/debug/registryz')).body;
      expect(registryz).to.contain('.svc.cluster.local');
      const plugins = JSON.parse((await httpGet(daemon.httpPort, '/debug/plugins')).body) as Array<{ name: string }>;
      expect(plugins.map((p) => p.name)).to.include('alpn-filter');
      // The monitoring port serves the debug pages too (pilot-discovery request uses it).
      expect((await httpGet(daemon.monitoringPort, '/debug/syncz')).status).to.equal(200);
      const missing = await httpGet(daemon.httpPort, '/debug/config_dump?proxyID=nobody');
      expect(missing.status).to.equal(404);
    } finally {
      await daemon.stop();
    }
  });

  it('keeps /ready but hides the debug interface with ENABLE_DEBUG_ON_HTTP=false', async () => {
    const daemon = await startDaemon(['--configDir', path.join(REPO_ROOT, 'samples', 'config')], { ENABLE_DEBUG_ON_HTTP: 'false' });
    try {
      expect((await httpGet(daemon.httpPort, '/ready')).status).to.equal(200);
      const syncz = await httpGet(daemon.httpPort, '/debug/syncz');
      expect(syncz.status).to.equal(404);
      expect(syncz.body).to.match(/ENABLE_DEBUG_ON_HTTP=false/);
    } finally {
      await daemon.stop();
    }
  });

  it('serves the Mock registry with --registries Mock, and says there is no orchestrator for Orch', async () => {
    const dir = tempDir();
    const daemon = await startDaemon(['--configDir', dir, '--registries', 'Orch,Mock']);
    try {
      expect(daemon.output()).to.match(/no orchestrator is configured/);
      const client = new SotwClient(daemon.grpcPort, sidecarNode('10.8.0.1', 'default'));
      client.send({ type_url: CDS });
      const names = resourcesOf(await client.next(CDS)).map((c) => c.name);
      client.close();
      expect(names).to.include('outbound|80||hello.default.svc.cluster.local');
      expect(names).to.include('outbound|8080||world.default.svc.cluster.local');
    } finally {
      await daemon.stop();
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });

  it('refuses an unknown registry and a bad listen address with one clear line', async () => {
    const bad = await runCli('pilot-discovery', ['discovery', '--registries', 'Orch,Consul', '--grpcAddr', '127.0.0.1:0', '--httpAddr', '127.0.0.1:0', '--monitoringAddr', '127.0.0.1:0']);
    expect(bad.code).to.equal(1);
    expect(bad.stderr).to.equal('Error: --registries: unknown registry "Consul" (choose from Orch, Mock)\n');
    const addr = await runCli('pilot-discovery', ['discovery', '--grpcAddr', ':notaport', '--httpAddr', '127.0.0.1:0', '--monitoringAddr', '127.0.0.1:0']);
    expect(addr.code).to.equal(1);
    expect(addr.stderr).to.match(/^Error: invalid --grpcAddr ":notaport": /);
  });

  it('stops gracefully on SIGTERM, closing xDS streams, and exits 0', async () => {
    const daemon = await startDaemon(['--configDir', path.join(REPO_ROOT, 'samples', 'config'), '--shutdownDuration', '2s']);
    const client = new SotwClient(daemon.grpcPort, sidecarNode('10.8.0.2', 'default'));
    client.send({ type_url: CDS });
    await client.next(CDS);
    const started = Date.now();
    const code = await daemon.stop('SIGTERM');
    client.close();
    expect(code).to.equal(0);
    expect(Date.now() - started).to.be.below(5_000);
    expect(daemon.output()).to.match(/shutting down \(grace 2000 ms\)/).and.match(/shutdown complete/);
  });

  it('reuses cached resources across pushes and evicts only what a change touches', async () => {
    const dir = tempDir();
    const se = (name: string) => `apiVersion: networking.mesh.io/v1
kind: ServiceEntry
metadata: {name: ${name}, namespace: foo}
spec:
  hosts: [${name}.foo.svc.cluster.local]
  resolution: STATIC
  location: MESH_INTERNAL
  ports: [{name: http, number: 80, protocol: HTTP}]
  endpoints: [{address: 10.2.0.1}]
`;
    fs.writeFileSync(path.join(dir, 'a.yaml'), se('alpha'));
    fs.writeFileSync(path.join(dir, 'b.yaml'), se('beta'));
    const daemon = await startDaemon(['--configDir', dir], { PILOT_XDS_CACHE_STATS: 'true' });
    try {
      const names = ['outbound|80||alpha.foo.svc.cluster.local', 'outbound|80||beta.foo.svc.cluster.local'];
      const client = new SotwClient(daemon.grpcPort, sidecarNode('10.8.0.3', 'foo'));
      client.send({ type_url: 'type.googleapis.com/envoy.config.endpoint.v3.ClusterLoadAssignment', resource_names: names });
      const first = await client.next();
      client.ack(first, names);
      const metrics = async () => (await httpGet(daemon.monitoringPort, '/metrics')).body;
      const before = await metrics();
      expect(metricValue(before, 'xds_cache_size', { type: 'eds' })).to.equal(2);
      // Only beta's endpoints change: alpha's assignment comes from the cache, beta's is rebuilt.
      fs.writeFileSync(path.join(dir, 'b.yaml'), se('beta').replace('10.2.0.1', '10.2.0.2'));
      const update = await client.next();
      expect(resourcesOf(update).map((r) => r.cluster_name)).to.deep.equal(['outbound|80||beta.foo.svc.cluster.local']);
      client.close();
      const after = await metrics();
      expect(metricValue(after, 'xds_cache_evictions', { type: 'dependency' }) - metricValue(before, 'xds_cache_evictions', { type: 'dependency' })).to.be.at.least(1);
      expect(metricValue(after, 'xds_cache_reads', { type: 'miss' })).to.be.greaterThan(metricValue(before, 'xds_cache_reads', { type: 'miss' }));
    } finally {
      await daemon.stop();
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('pilot-discovery request', function () {
  this.timeout(30_000);

  it('prints /debug/syncz of a daemon on the default monitoring port', async () => {
    const daemon = await startDaemon(['--configDir', path.join(REPO_ROOT, 'samples', 'config'), '--monitoringAddr', '127.0.0.1:15014']);
    try {
      const client = new SotwClient(daemon.grpcPort, sidecarNode('10.8.0.4', 'default'));
      client.send({ type_url: CDS });
      await client.next(CDS);
      const r = await runCli('pilot-discovery', ['request', 'GET', '/debug/syncz']);
      client.close();
      expect(r.code, r.stderr).to.equal(0);
      const body = JSON.parse(r.stdout) as Array<{ proxy: string }>;
      expect(body.map((b) => b.proxy)).to.include('sidecar~10.8.0.4~app.default~default.svc.cluster.local');
    } finally {
      await daemon.stop();
    }
  });
});
