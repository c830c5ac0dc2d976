import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { CoreV1Api, V1ConfigMap } from '@kubernetes/client-node';
import { expect } from 'chai';
import { Logging } from '../../../src/modules/logging';
import { defaultLoggingOptions } from '../../../src/modules/logging/options';
import { DaemonMetrics } from '../../../src/modules/monitoring';
import { Informer, OrchClient, OrchClientOptions, OrchConfigError, OrchMetrics, OrchResource } from '../../../src/modules/orch';
import { Settings } from '../../../src/modules/settings';
import { OrchApiServer, startOrchApiServer } from '../../helpers/orch-api';

const CONFIG_MAPS: OrchResource = { group: '', version: 'v1', plural: 'configmaps', kind: 'ConfigMap', namespaced: true };

/** Polls `check` until it holds or `ms` pass. */
async function eventually(check: () => boolean, ms = 5000, what = 'condition'): Promise<void> {
  const deadline = Date.now() + ms;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

function quietLogging(): Logging {
  const logging = new Logging('pilot-discovery');
  logging.configure({ ...defaultLoggingOptions('pilot-discovery'), defaultOutputLevel: 'none' });
  return logging;
}

function configMap(name: string, data: Record<string, string> = { a: '1' }): V1ConfigMap {
  return { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, namespace: 'default' }, data };
}

/** Every event an informer delivers, as `type name`. */
function record(informer: Informer<V1ConfigMap>): string[] {
  const events: string[] = [];
  informer.on({
    add: (o) => events.push(`add ${o.metadata?.name}`),
    update: (_old, o, resync) => events.push(`${resync ? 'resync' : 'update'} ${o.metadata?.name}`),
    delete: (o) => events.push(`delete ${o.metadata?.name}`),
  });
  return events;
}

describe('orchestrator client', function () {
  this.timeout(30_000);
  let server: OrchApiServer;
  let dir: string;
  let kubeconfig: string;
  let client: OrchClient | undefined;
  let metrics: DaemonMetrics;

  before(async () => {
    server = await startOrchApiServer({ simulateCluster: false, bookmarkIntervalMs: 200 });
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'orch-client-'));
    kubeconfig = server.writeKubeconfigFile(dir);
  });

  after(async () => {
    await server.stop();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  afterEach(async () => {
    client?.stop();
    client = undefined;
    server.faults.clear();
    for (const cm of server.list('v1', 'ConfigMap', 'default')) await server.delete('v1', 'ConfigMap', 'default', cm.metadata.name);
  });

  function makeClient(options: Partial<OrchClientOptions> = {}): OrchClient {
    metrics = new DaemonMetrics({ component: 'pilot', version: 'test' });
    const orchMetrics = new OrchMetrics(metrics, new Settings('pilot-discovery', { MESH_ENABLE_CONTROLLER_QUEUE_METRICS: 'true' }));
    client = new OrchClient({ orchconfig: kubeconfig, qps: 1000, burst: 1000, ...options }, quietLogging(), orchMetrics);
    return client;
  }

  async function metric(name: string): Promise<number> {
    const text = await metrics.registry.metrics();
    const line = text.split('\n').find((l) => l.startsWith(`${name} `) || l.startsWith(`${name}{`));
    return line ? Number(line.split(' ').pop()) : 0;
  }

  describe('config', () => {
    it('names the file and what is wrong with it when the orchestrator config is unusable', () => {
      const cases: Array<[string, string, RegExp]> = [
        ['missing', '', /orchestrator config .*missing: ENOENT/],
        ['not-yaml', 'clusters: [\n', /orchestrator config .*not-yaml: not YAML/],
        ['a-list', '- 1\n- 2\n', /orchestrator config .*a-list: not an orchestrator config/],
        ['no-cluster', 'apiVersion: v1\nkind: Config\nclusters: []\ncontexts: []\nusers: []\n', /orchestrator config .*no-cluster: no current cluster/],
      ];
      for (const [name, text, expected] of cases) {
        const file = path.join(dir, name);
        if (text) fs.writeFileSync(file, text);
        const c = new OrchClient({ orchconfig: file, qps: 1, burst: 1 }, quietLogging());
        expect(() => c.kubeConfig, name).to.throw(OrchConfigError, expected);
      }
      const c = new OrchClient({ orchconfig: kubeconfig, context: 'elsewhere', qps: 1, burst: 1 }, quietLogging());
      expect(() => c.kubeConfig).to.throw(OrchConfigError, /--context: no context "elsewhere" in orchestrator config .* \(it has orch-test\)/);
      expect(() => new OrchClient({ orchconfig: kubeconfig, qps: 5, burst: 0 }, quietLogging())).to.throw(OrchConfigError, /--orchApiBurst must be at least 1/);
    });
  });

  describe('rate limit', () => {
    it('lets a burst through at once, then paces every request (typed APIs and lists alike) at the QPS', async () => {
      const c = makeClient({ qps: 10, burst: 4 });
      const api = c.api(CoreV1Api);
      const before = server.requests.count();
      const started = Date.now();
      const counts: number[] = [];
      const sampler = setInterval(() => counts.push(server.requests.count() - before), 50);
      try {
        await Promise.all([
          ...Array.from({ length: 10 }, () => api.listNamespacedConfigMap({ namespace: 'default' })),
          ...Array.from({ length: 4 }, () => c.getJson('/api/v1/namespaces/default/configmaps')),
        ]);
      } finally {
        clearInterval(sampler);
      }
      const elapsed = Date.now() - started;
      expect(server.requests.count() - before).to.equal(14);
      // 4 at once, then 10 more at 10 per second: about a second, never much faster.
      expect(elapsed).to.be.at.least(900);
      // Within the first 250 ms: the burst and at most two or three paced ones (a busy machine may send fewer, never more).
      const early = counts[Math.floor(250 / 50) - 1];
      expect(early).to.be.at.most(7);
    });

    it('with a QPS of zero or less, does not limit', async () => {
      const c = makeClient({ qps: 0, burst: 0 });
      const api = c.api(CoreV1Api);
      const started = Date.now();
      await Promise.all(Array.from({ length: 20 }, () => api.listNamespacedConfigMap({ namespace: 'default' })));
      expect(Date.now() - started).to.be.below(2000);
    });
  });

  describe('informer', () => {
    it('lists, then watches: add, update, delete, an index, and resync of unchanged objects', async () => {
      await server.create(configMap('one'));
      const informer = makeClient().informer<V1ConfigMap>(CONFIG_MAPS, { namespace: 'default', resyncMs: 300 });
      informer.addIndex('value', (cm) => Object.values(cm.data ?? {}));
      const events = record(informer);
      informer.start();
      expect(await informer.waitForSync(5000)).to.equal(true);
      expect(informer.hasSynced()).to.equal(true);
      expect(events).to.deep.equal(['add one']);

      await server.create(configMap('two', { a: '2' }));
      await eventually(() => events.includes('add two'));
      expect(informer.byIndex('value', '2').map((c) => c.metadata?.name)).to.deep.equal(['two']);
      const current = server.get('v1', 'ConfigMap', 'default', 'two');
      await server.update({ ...current, data: { a: '3' } });
      await eventually(() => events.includes('update two'));
      expect(informer.byIndex('value', '2')).to.deep.equal([]);
      expect(informer.byIndex('value', '3').map((c) => c.metadata?.name)).to.deep.equal(['two']);
      await server.delete('v1', 'ConfigMap', 'default', 'one');
      await eventually(() => events.includes('delete one'));
      expect(informer.get('one', 'default')).to.equal(undefined);
      await eventually(() => events.includes('resync two'), 2000, 'a resync');
    });

    it('relists after the watch history is compacted (410) and reports only what changed meanwhile', async () => {
      for (const name of ['keep', 'change', 'gone']) await server.create(configMap(name));
      const informer = makeClient().informer<V1ConfigMap>(CONFIG_MAPS, { namespace: 'default', initialBackoffMs: 50, maxBackoffMs: 200 });
      const events = record(informer);
      informer.start();
      await informer.waitForSync(5000);
      events.length = 0;
      const lists = () => server.requests.count({ verb: 'list', resource: 'configmaps' });
      const listsBefore = lists();

      // The watch is cut and cannot come back until the changes are made and the history forgotten.
      server.faults.failRequests(500, { match: /watch=true/ });
      server.faults.dropWatches();
      await server.create(configMap('new'));
      await server.update({ ...server.get('v1', 'ConfigMap', 'default', 'change'), data: { a: 'changed' } });
      await server.delete('v1', 'ConfigMap', 'default', 'gone');
      server.faults.compact();
      await new Promise((r) => setTimeout(r, 300));
      server.faults.clear();

      await eventually(() => events.length >= 3, 5000, 'the missed changes');
      await new Promise((r) => setTimeout(r, 300));
      expect(lists()).to.be.above(listsBefore);
      expect([...events].sort()).to.deep.equal(['add new', 'delete gone', 'update change']);
      expect(informer.list().map((c) => c.metadata?.name).sort()).to.deep.equal(['change', 'keep', 'new']);
      // And it watches again: a later change arrives.
      await server.create(configMap('later'));
      await eventually(() => events.includes('add later'));
    });

    it('backs off exponentially (capped, with jitter) while the API answers 500, and recovers', async () => {
      await server.create(configMap('one'));
      const informer = makeClient().informer<V1ConfigMap>(CONFIG_MAPS, { namespace: 'default', initialBackoffMs: 100, maxBackoffMs: 400 });
      const events = record(informer);
      informer.start();
      await informer.waitForSync(5000);
      const errorsBefore = await metric('controller_sync_errors_total');

      server.faults.failRequests(500, { forMs: 2500 });
      const before = server.requests.log.length;
      server.faults.dropWatches();
      await new Promise((r) => setTimeout(r, 2500));
      const during = server.requests.log.slice(before).filter((r) => r.path.endsWith('/configmaps')).length;
      // 100, 200, 400, 400, ... ms (times 1-2 for jitter, capped at 400): between 4 and 15 tries in 2.5 s.
      expect(during).to.be.within(3, 15);
      expect(await metric('controller_sync_errors_total')).to.be.at.least(errorsBefore + 3);

      await server.create(configMap('after'));
      await eventually(() => events.includes('add after'), 3000, 'recovery');
      expect(informer.lastError).to.equal(undefined);
    });

    it('comes back after the API server restarts, and sees what changed', async () => {
      await server.create(configMap('one'));
      const informer = makeClient().informer<V1ConfigMap>(CONFIG_MAPS, { namespace: 'default', initialBackoffMs: 50, maxBackoffMs: 500 });
      const events = record(informer);
      informer.start();
      await informer.waitForSync(5000);
      await server.restart();
      await server.create(configMap('two'));
      await eventually(() => events.includes('add two'), 5000, 'the change after the restart');
      expect(events.filter((e) => e !== 'add two')).to.deep.equal(['add one']);
    });

    it('treats a resource that is not served as empty when asked to', async () => {
      const missing: OrchResource = { group: 'example.mesh.io', version: 'v1', plural: 'widgets', kind: 'Widget', namespaced: true };
      const informer = makeClient().informer(missing, { missingIsEmpty: true, maxBackoffMs: 300 });
      informer.start();
      expect(await informer.waitForSync(3000)).to.equal(true);
      expect(informer.list()).to.deep.equal([]);
    });

    it('stops: no more requests, waitForSync answers false', async () => {
      const c = makeClient();
      const informer = c.informer<V1ConfigMap>(CONFIG_MAPS, { namespace: 'default' });
      server.faults.failRequests(500);
      informer.start();
      c.stop();
      expect(await informer.waitForSync(1000)).to.equal(false);
      const count = server.requests.count();
      await new Promise((r) => setTimeout(r, 500));
      expect(server.requests.count()).to.equal(count);
    });
  });
});
