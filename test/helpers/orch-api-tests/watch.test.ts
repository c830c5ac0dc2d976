import { expect } from 'chai';
import * as k8s from '@kubernetes/client-node';
import { type OrchApiServer, startOrchApiServer } from '../orch-api';
import { apiError, rawWatch, request, waitUntil } from './support';

const cm = (name: string, data: Record<string, string> = {}, labels?: Record<string, string>) => ({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, namespace: 'default', labels }, data });

describe('orch API server: watch, bookmarks, 410 Gone, faults and restart', () => {
  let server: OrchApiServer;

  beforeEach(async () => {
    server = await startOrchApiServer({ simulateCluster: false, bookmarkIntervalMs: 100 });
  });
  afterEach(() => server.stop());

  it('streams chunked JSON lines: the current state as ADDED, then changes, each at a higher resourceVersion', async () => {
    await server.create(cm('w1'));
    const w = await rawWatch(server, '/api/v1/namespaces/default/configmaps?watch=true');
    expect(w.status).to.equal(200);
    expect(w.contentType).to.equal('application/json');
    await waitUntil('the initial event', () => w.events.length === 1);
    await server.update(cm('w1', { a: '1' }));
    await server.delete('v1', 'ConfigMap', 'default', 'w1');
    await waitUntil('the change events', () => w.events.length === 3);
    expect(w.events.map((e) => e.type)).to.deep.equal(['ADDED', 'MODIFIED', 'DELETED']);
    expect(w.events[1].object).to.deep.include({ kind: 'ConfigMap', apiVersion: 'v1', data: { a: '1' } });
    const rvs = w.events.map((e) => Number(e.object.metadata.resourceVersion));
    expect(rvs[1]).to.be.greaterThan(rvs[0]);
    expect(rvs[2]).to.be.greaterThan(rvs[1]);
    w.close();
  });

  it('resumes after a resourceVersion with exactly the later changes, also on the /watch/ path', async () => {
    const first = await server.create(cm('r1'));
    await server.create(cm('r2'));
    await server.update(cm('r1', { x: 'y' }));
    const w = await rawWatch(server, `/api/v1/watch/namespaces/default/configmaps?resourceVersion=${first.metadata.resourceVersion}`);
    await waitUntil('the two later changes', () => w.events.length === 2);
    expect(w.events.map((e) => `${e.type} ${e.object.metadata.name}`)).to.deep.equal(['ADDED r2', 'MODIFIED r1']);
    w.close();
  });

  it('turns selection changes into ADDED and DELETED for a selecting watch', async () => {
    await server.create(cm('s1', {}, { app: 'a' }));
    const w = await rawWatch(server, '/api/v1/namespaces/default/configmaps?watch=1&labelSelector=app%3Db');
    await server.update(cm('s1', {}, { app: 'b' }));
    await server.update(cm('s1', { v: '2' }, { app: 'b' }));
    await server.update(cm('s1', {}, { app: 'c' }));
    await waitUntil('three events', () => w.events.length === 3);
    expect(w.events.map((e) => e.type)).to.deep.equal(['ADDED', 'MODIFIED', 'DELETED']);
    w.close();
  });

  it('answers a resume from a forgotten resourceVersion with an in-stream ERROR 410 and ends the stream; a list with Exact answers 410', async () => {
    const old = await server.create(cm('g1'));
    await server.create(cm('g2'));
    server.faults.compact();
    const w = await rawWatch(server, `/api/v1/namespaces/default/configmaps?watch=true&resourceVersion=${old.metadata.resourceVersion}`);
    await waitUntil('the stream ends', () => w.ended());
    expect(w.events).to.have.length(1);
    expect(w.events[0].type).to.equal('ERROR');
    expect(w.events[0].object).to.deep.include({ kind: 'Status', status: 'Failure', reason: 'Expired', code: 410 });
    expect(w.events[0].object.message).to.match(/^too old resource version: \d+ \(\d+\)$/);
    const list = await request(server, 'GET', `/api/v1/namespaces/default/configmaps?resourceVersion=${old.metadata.resourceVersion}&resourceVersionMatch=Exact`);
    expect(list.status).to.equal(410);
  });

  it('forgets history beyond historyLimit', async () => {
    await server.stop();
    server = await startOrchApiServer({ simulateCluster: false, historyLimit: 10 });
    const first = await server.create(cm('h0'));
    for (let i = 1; i < 40; i++) await server.create(cm(`h${i}`));
    const w = await rawWatch(server, `/api/v1/namespaces/default/configmaps?watch=true&resourceVersion=${first.metadata.resourceVersion}`);
    await waitUntil('the stream ends', () => w.ended());
    expect(w.events[0].object.code).to.equal(410);
  });

  it('sends BOOKMARK events at the configured interval when allowed, and an initial-events-end bookmark with sendInitialEvents', async () => {
    await server.create(cm('b1'));
    const plain = await rawWatch(server, '/api/v1/namespaces/default/configmaps?watch=true');
    const w = await rawWatch(server, '/api/v1/namespaces/default/configmaps?watch=true&allowWatchBookmarks=true');
    await waitUntil('two bookmarks', () => w.events.filter((e) => e.type === 'BOOKMARK').length >= 2, 3000);
    const bookmark = w.events.find((e) => e.type === 'BOOKMARK');
    expect(bookmark?.object).to.deep.equal({ kind: 'ConfigMap', apiVersion: 'v1', metadata: { resourceVersion: server.resourceVersion } });
    expect(plain.events.map((e) => e.type)).to.deep.equal(['ADDED']);
    const initial = await rawWatch(server, '/api/v1/namespaces/default/configmaps?watch=true&allowWatchBookmarks=true&sendInitialEvents=true&resourceVersionMatch=NotOlderThan');
    await waitUntil('the initial events', () => initial.events.length >= 2);
    expect(initial.events[1].type).to.equal('BOOKMARK');
    expect(initial.events[1].object.metadata.annotations).to.deep.equal({ 'k8s.io/initial-events-end': 'true' });
    for (const s of [plain, w, initial]) s.close();
  });

  it('ends a watch after timeoutSeconds', async () => {
    const w = await rawWatch(server, '/api/v1/namespaces/default/configmaps?watch=true&timeoutSeconds=1');
    await waitUntil('the stream ends', () => w.ended(), 3000);
  });

  it('dropWatches ends every open stream', async () => {
    const a = await rawWatch(server, '/api/v1/configmaps?watch=true');
    const b = await rawWatch(server, '/apis/coordination.k8s.io/v1/leases?watch=true');
    await waitUntil('both registered', () => server.watchCount === 2);
    server.faults.dropWatches();
    await waitUntil('both ended', () => a.ended() && b.ended());
    expect(server.watchCount).to.equal(0);
  });

  it('failRequests answers matching requests with a Status error, for a count or for a time', async () => {
    const core = server.kubeConfig().makeApiClient(k8s.CoreV1Api);
    server.faults.failRequests(500, { count: 2, match: /configmaps/ });
    expect((await apiError(core.listNamespacedConfigMap({ namespace: 'default' }))).status).to.deep.include({ code: 500, reason: 'InternalError' });
    expect((await core.listNamespacedSecret({ namespace: 'default' })).items).to.deep.equal([]);
    expect((await apiError(core.listNamespacedConfigMap({ namespace: 'default' }))).code).to.equal(500);
    await core.listNamespacedConfigMap({ namespace: 'default' });
    server.faults.failRequests(503, { forMs: 200 });
    expect((await apiError(core.listNamespacedSecret({ namespace: 'default' }))).status.details).to.deep.equal({ retryAfterSeconds: 1 });
    await new Promise((r) => setTimeout(r, 250));
    await core.listNamespacedSecret({ namespace: 'default' });
  });

  describe('a client-node informer', () => {
    let informer: k8s.Informer<k8s.V1ConfigMap> & k8s.ObjectCache<k8s.V1ConfigMap>;
    let stopInformer: () => Promise<void>;
    const seen: string[] = [];

    beforeEach(async () => {
      seen.length = 0;
      const kc = server.kubeConfig();
      const core = kc.makeApiClient(k8s.CoreV1Api);
      informer = k8s.makeInformer(kc, '/api/v1/namespaces/default/configmaps', () => core.listNamespacedConfigMap({ namespace: 'default' }));
      informer.on('add', (o) => seen.push(`add ${o.metadata?.name}`));
      informer.on('update', (o) => seen.push(`update ${o.metadata?.name} ${JSON.stringify(o.data ?? {})}`));
      informer.on('delete', (o) => seen.push(`delete ${o.metadata?.name}`));
      // As a product's informer would: after an error, start again (unless stopped).
      let stopped = false;
      informer.on('error', () => setTimeout(() => void (stopped || informer.start().catch(() => undefined)), 50));
      stopInformer = () => {
        stopped = true;
        return informer.stop();
      };
      await server.create(cm('i0'));
      await informer.start();
    });
    afterEach(() => stopInformer());

    const names = () => informer.list().map((o) => o.metadata?.name).sort();

    it('gets adds, updates and deletes', async () => {
      await server.create(cm('i1'));
      await server.update(cm('i1', { k: 'v' }));
      await server.delete('v1', 'ConfigMap', 'default', 'i0');
      await waitUntil('all events', () => seen.length === 4);
      expect(seen).to.deep.equal(['add i0', 'add i1', 'update i1 {"k":"v"}', 'delete i0']);
    });

    it('recovers after dropped watches, a compaction (410) and a restart, converging to the server state', async () => {
      server.faults.dropWatches();
      await server.create(cm('after-drop'));
      await waitUntil('the object after the drop', () => names().includes('after-drop'));

      // Away long enough to miss changes that are then compacted: the resume answers 410 and the informer relists.
      server.faults.failRequests(500, { forMs: 300, match: /watch=true/ });
      server.faults.dropWatches();
      await server.create(cm('while-away'));
      await server.delete('v1', 'ConfigMap', 'default', 'i0');
      server.faults.compact();
      const listsBefore = server.requests.count({ verb: 'list', resource: 'configmaps' });
      await waitUntil('relisted after 410', () => names().join() === 'after-drop,while-away', 8000);
      expect(server.requests.count({ verb: 'list', resource: 'configmaps' })).to.be.greaterThan(listsBefore);

      await server.restart();
      await server.update(cm('while-away', { after: 'restart' }));
      await waitUntil('the change after the restart', () => informer.get('while-away', 'default')?.data?.after === 'restart', 8000);
    });
  });

  it('restart(whileDown) stays away while it runs: connections refused, direct access working, then serves the state', async () => {
    const w = await rawWatch(server, '/api/v1/configmaps?watch=true');
    let refused: Error | undefined;
    await server.restart(async () => {
      await waitUntil('the stream ends', () => w.ended());
      refused = await request(server, 'GET', '/version').then(
        () => undefined,
        (e: Error) => e,
      );
      await server.create(cm('while-down'));
    });
    expect(refused?.message).to.match(/ECONNREFUSED/);
    const res = await request(server, 'GET', '/api/v1/namespaces/default/configmaps/while-down');
    expect(res.status).to.equal(200);
  });

  it('stop() ends open watches and closes the port', async () => {
    const w = await rawWatch(server, '/api/v1/configmaps?watch=true');
    await server.stop();
    await waitUntil('the stream ends', () => w.ended());
    const err = await request(server, 'GET', '/version').then(
      () => undefined,
      (e: Error) => e,
    );
    expect(err?.message).to.match(/ECONNREFUSED/);
    server = await startOrchApiServer({ simulateCluster: false });
  });
});
