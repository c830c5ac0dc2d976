import { expect } from 'chai';
import * as k8s from '@kubernetes/client-node';
import { orchConfigFor } from '../../src/modules/orch';
import { OrchApiServer, waitUntil } from './orch-api-server';

/** The fake orchestrator API server, driven through @kubernetes/client-node as the product drives it. */

function pod(name: string, options: { namespace?: string; node?: string; labels?: Record<string, string>; phase?: string } = {}): k8s.V1Pod {
  return {
    metadata: { name, namespace: options.namespace ?? 'default', labels: options.labels },
    spec: { nodeName: options.node, containers: [{ name: 'app', image: 'app' }] },
    status: { phase: options.phase ?? 'Running' },
  };
}

async function apiError(promise: Promise<unknown>): Promise<k8s.ApiException<string>> {
  try {
    await promise;
  } catch (err) {
    if (err instanceof k8s.ApiException) return err as k8s.ApiException<string>;
    throw err;
  }
  throw new Error('expected the call to fail');
}

interface WatchEvent {
  type: string;
  name: string;
  rv: string;
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
}

/** A raw watch through the library's Watch, collecting events. */
async function watch(kc: k8s.KubeConfig, path: string, query: Record<string, string | boolean>) {
  const events: WatchEvent[] = [];
  let ended: unknown = 'open';
  const controller = await new k8s.Watch(kc).watch(
    path,
    query,
    (type, object: k8s.V1Pod) =>
      events.push({
        type,
        name: object.metadata?.name ?? '',
        rv: object.metadata?.resourceVersion ?? '',
        labels: object.metadata?.labels,
        annotations: object.metadata?.annotations,
      }),
    (err) => (ended = err),
  );
  return { events, ended: () => ended, abort: () => controller.abort() };
}

describe('OrchApiServer (fake orchestrator API, through @kubernetes/client-node)', () => {
  let server: OrchApiServer;
  let kc: k8s.KubeConfig;
  let api: k8s.CoreV1Api;

  beforeEach(async () => {
    server = new OrchApiServer();
    await server.start();
    kc = server.kubeConfig();
    api = kc.makeApiClient(k8s.CoreV1Api);
  });

  afterEach(async () => {
    await server.stop();
  });

  it('lists pods in all namespaces and in one, with monotonically increasing resource versions', async () => {
    const a = server.addPod(pod('a', { node: 'n1' }));
    const b = server.addPod(pod('b', { namespace: 'other', node: 'n2' }));
    expect(Number(b.metadata?.resourceVersion)).to.be.greaterThan(Number(a.metadata?.resourceVersion));
    expect(a.metadata?.uid).to.match(/^[0-9a-f-]{36}$/);

    const all = await api.listPodForAllNamespaces();
    expect(all.items.map((p) => p.metadata?.name)).to.deep.equal(['a', 'b']);
    expect(all.metadata?.resourceVersion).to.equal(server.resourceVersion);
    expect(all.items[0].metadata?.creationTimestamp).to.be.instanceOf(Date);

    const other = await api.listNamespacedPod({ namespace: 'other' });
    expect(other.items.map((p) => p.metadata?.name)).to.deep.equal(['b']);

    const updated = server.modifyPod('default', 'a', (p) => (p.status = { phase: 'Failed' }));
    expect(Number(updated.metadata?.resourceVersion)).to.be.greaterThan(Number(b.metadata?.resourceVersion));
    expect(updated.metadata?.uid).to.equal(a.metadata?.uid);
  });

  it('filters lists by field selectors (=, ==, !=, comma = AND)', async () => {
    server.addPod(pod('a', { node: 'n1', phase: 'Running' }));
    server.addPod(pod('b', { node: 'n1', phase: 'Pending' }));
    server.addPod(pod('c', { node: 'n2', phase: 'Running', namespace: 'x' }));
    const names = async (fieldSelector: string) => (await api.listPodForAllNamespaces({ fieldSelector })).items.map((p) => p.metadata?.name);
    expect(await names('spec.nodeName=n1')).to.deep.equal(['a', 'b']);
    expect(await names('spec.nodeName==n2')).to.deep.equal(['c']);
    expect(await names('spec.nodeName!=n1')).to.deep.equal(['c']);
    expect(await names('spec.nodeName=n1,status.phase=Running')).to.deep.equal(['a']);
    expect(await names('metadata.namespace=x')).to.deep.equal(['c']);
    expect(await names('metadata.name=b')).to.deep.equal(['b']);
    expect(await names('metadata.name!=b,status.phase!=Running')).to.deep.equal([]);
  });

  it('filters lists by label selectors (=, !=, in, notin, existence, !)', async () => {
    server.addPod(pod('a', { labels: { app: 'web', tier: 'front' } }));
    server.addPod(pod('b', { labels: { app: 'db' } }));
    server.addPod(pod('c', {}));
    const names = async (labelSelector: string) => (await api.listNamespacedPod({ namespace: 'default', labelSelector })).items.map((p) => p.metadata?.name);
    expect(await names('app=web')).to.deep.equal(['a']);
    expect(await names('app!=web')).to.deep.equal(['b', 'c']);
    expect(await names('app in (web, db)')).to.deep.equal(['a', 'b']);
    expect(await names('app notin (web)')).to.deep.equal(['b', 'c']);
    expect(await names('tier')).to.deep.equal(['a']);
    expect(await names('!tier')).to.deep.equal(['b', 'c']);
    expect(await names('app,!tier')).to.deep.equal(['b']);
  });

  it('rejects an unsupported field or a malformed selector with a 400 Status', async () => {
    const bad = await apiError(api.listPodForAllNamespaces({ fieldSelector: 'spec.color=red' }));
    expect(bad.code).to.equal(400);
    expect(JSON.parse(bad.body)).to.include({ kind: 'Status', status: 'Failure', reason: 'BadRequest', code: 400 });
    expect(JSON.parse(bad.body).message).to.contain('field label not supported: spec.color');
    const malformed = await apiError(api.listPodForAllNamespaces({ labelSelector: 'app in (web' }));
    expect(malformed.code).to.equal(400);
  });

  it('answers unknown pods, namespaces and paths with 404 Status objects', async () => {
    const missing = await apiError(api.readNamespacedPod({ name: 'nope', namespace: 'default' }));
    expect(missing.code).to.equal(404);
    expect(JSON.parse(missing.body)).to.deep.equal({
      kind: 'Status',
      apiVersion: 'v1',
      metadata: {},
      status: 'Failure',
      message: 'pods "nope" not found',
      reason: 'NotFound',
      details: { name: 'nope', kind: 'pods' },
      code: 404,
    });
    const ns = await apiError(api.readNamespace({ name: 'ghost' }));
    expect(ns.code).to.equal(404);
    expect(JSON.parse(ns.body).message).to.equal('namespaces "ghost" not found');
    const svc = await apiError(api.listNamespacedService({ namespace: 'default' }));
    expect(svc.code).to.equal(404);
    expect(JSON.parse(svc.body).message).to.equal('the server could not find the requested resource');
  });

  it('serves namespaces, created explicitly or by their first pod', async () => {
    server.addNamespace('mesh-system', { team: 'mesh' });
    server.addPod(pod('a', { namespace: 'apps' }));
    expect((await api.readNamespace({ name: 'mesh-system' })).metadata?.labels).to.deep.equal({ team: 'mesh' });
    expect((await api.readNamespace({ name: 'apps' })).status?.phase).to.equal('Active');
  });

  it('reads one pod with its kind', async () => {
    server.addPod(pod('a', { node: 'n1' }));
    const read = await api.readNamespacedPod({ name: 'a', namespace: 'default' });
    expect(read.kind).to.equal('Pod');
    expect(read.spec?.nodeName).to.equal('n1');
  });

  it('patches labels by merge, strategic merge and JSON patch, and logs each request', async () => {
    server.addPod(pod('a', { labels: { app: 'web', old: 'x' } }));
    const merge = k8s.setHeaderOptions('Content-Type', k8s.PatchStrategy.MergePatch);
    const strategic = k8s.setHeaderOptions('Content-Type', k8s.PatchStrategy.StrategicMergePatch);
    const before = Number(server.resourceVersion);

    const merged = await api.patchNamespacedPod({ name: 'a', namespace: 'default', body: { metadata: { labels: { added: 'yes', old: null } } } }, merge);
    expect(merged.metadata?.labels).to.deep.equal({ app: 'web', added: 'yes' });
    expect(Number(merged.metadata?.resourceVersion)).to.equal(before + 1);

    const viaStrategic = await api.patchNamespacedPod({ name: 'a', namespace: 'default', body: { metadata: { annotations: { note: 'n' } } } }, strategic);
    expect(viaStrategic.metadata?.annotations).to.deep.equal({ note: 'n' });

    // The library's default patch type is JSON patch.
    const json = await api.patchNamespacedPod({
      name: 'a',
      namespace: 'default',
      body: [
        { op: 'replace', path: '/metadata/labels/app', value: 'api' },
        { op: 'remove', path: '/metadata/labels/added' },
        { op: 'add', path: '/metadata/labels/cni.mesh.io~1uninitialized', value: 'true' },
      ],
    });
    expect(json.metadata?.labels).to.deep.equal({ app: 'api', 'cni.mesh.io/uninitialized': 'true' });
    expect(server.pod('default', 'a')?.metadata?.labels).to.deep.equal(json.metadata?.labels);

    const patches = server.requestsTo('PATCH', '/api/v1/namespaces/default/pods/a');
    expect(patches.map((r) => r.contentType)).to.deep.equal([
      'application/merge-patch+json',
      'application/strategic-merge-patch+json',
      'application/json-patch+json',
    ]);
    expect(patches[0].body).to.deep.equal({ metadata: { labels: { added: 'yes', old: null } } });
  });

  it('rejects a JSON patch on a missing path (422) and a stale resourceVersion (409), leaving the pod as it was', async () => {
    const stored = server.addPod(pod('a', { labels: { app: 'web' } }));
    const missing = await apiError(api.patchNamespacedPod({ name: 'a', namespace: 'default', body: [{ op: 'replace', path: '/metadata/labels/nope', value: 'x' }] }));
    expect(missing.code).to.equal(422);
    const merge = k8s.setHeaderOptions('Content-Type', k8s.PatchStrategy.MergePatch);
    const stale = await apiError(api.patchNamespacedPod({ name: 'a', namespace: 'default', body: { metadata: { resourceVersion: '1', labels: { a: 'b' } } } }, merge));
    expect(stale.code).to.equal(409);
    expect(server.pod('default', 'a')).to.deep.equal(stored);
  });

  it('patches through pods/status without touching the spec', async () => {
    server.addPod(pod('a', { node: 'n1' }));
    const merge = k8s.setHeaderOptions('Content-Type', k8s.PatchStrategy.MergePatch);
    const patched = await api.patchNamespacedPodStatus(
      { name: 'a', namespace: 'default', body: { metadata: { labels: { l: 'v' } }, spec: { nodeName: 'elsewhere' }, status: { phase: 'Failed' } } },
      merge,
    );
    expect(patched.metadata?.labels).to.deep.equal({ l: 'v' });
    expect(patched.status?.phase).to.equal('Failed');
    expect(patched.spec?.nodeName).to.equal('n1');
    expect(server.requestsTo('PATCH', '/api/v1/namespaces/default/pods/a/status')).to.have.length(1);
  });

  it('deletes pods, honouring preconditions', async () => {
    const a = server.addPod(pod('a'));
    const wrongUid = await apiError(api.deleteNamespacedPod({ name: 'a', namespace: 'default', body: { preconditions: { uid: 'other' } } }));
    expect(wrongUid.code).to.equal(409);
    expect(JSON.parse(wrongUid.body).message).to.contain('Precondition failed: UID in precondition: other');
    const staleVersion = await apiError(
      api.deleteNamespacedPod({ name: 'a', namespace: 'default', body: { preconditions: { resourceVersion: String(Number(a.metadata?.resourceVersion) - 1) } } }),
    );
    expect(staleVersion.code).to.equal(409);
    expect(server.pods()).to.have.length(1);

    await api.deleteNamespacedPod({ name: 'a', namespace: 'default', body: { preconditions: { uid: a.metadata?.uid, resourceVersion: a.metadata?.resourceVersion } } });
    expect(server.pods()).to.deep.equal([]);
    expect((await apiError(api.deleteNamespacedPod({ name: 'a', namespace: 'default' }))).code).to.equal(404);
    expect(server.requestsTo('DELETE', '/api/v1/namespaces/default/pods/a')).to.have.length(4);
  });

  it('with graceful deletion, marks a scheduled pod as terminating until the test finishes it', async () => {
    await server.stop();
    server = new OrchApiServer({ gracefulDeletion: true });
    await server.start();
    api = server.kubeConfig().makeApiClient(k8s.CoreV1Api);
    server.addPod(pod('a', { node: 'n1' }));
    const marked = await api.deleteNamespacedPod({ name: 'a', namespace: 'default' });
    expect(marked.metadata?.deletionTimestamp).to.be.instanceOf(Date);
    expect(server.pod('default', 'a')?.metadata?.deletionGracePeriodSeconds).to.equal(30);
    server.deletePod('default', 'a');
    expect(server.pods()).to.deep.equal([]);
  });

  it('feeds an informer (makeInformer): initial list, then adds, updates and deletes by watch', async () => {
    server.addPod(pod('a', { labels: { app: 'web' } }));
    server.addPod(pod('skip', { labels: { app: 'db' } }));
    const informer = k8s.makeInformer<k8s.V1Pod>(
      kc,
      '/api/v1/namespaces/default/pods',
      () => api.listNamespacedPod({ namespace: 'default', labelSelector: 'app=web' }),
      'app=web',
    );
    const seen: string[] = [];
    informer.on('add', (p) => seen.push(`add ${p.metadata?.name}`));
    informer.on('update', (p) => seen.push(`update ${p.metadata?.name} ${p.status?.phase}`));
    informer.on('delete', (p) => seen.push(`delete ${p.metadata?.name}`));
    try {
      await informer.start();
      expect(seen).to.deep.equal(['add a']);
      await waitUntil('the informer watches', () => server.watchCount === 1);
      const watchRequest = server.requestsTo('GET', '/api/v1/namespaces/default/pods').find((r) => r.query.watch === 'true');
      expect(watchRequest?.query).to.include({ labelSelector: 'app=web', resourceVersion: server.resourceVersion });

      server.addPod(pod('b', { labels: { app: 'web' } }));
      server.modifyPod('default', 'a', (p) => (p.status = { phase: 'Failed' }));
      server.modifyPod('default', 'skip', (p) => (p.status = { phase: 'Failed' }));
      // Leaving the selection reads as a deletion.
      server.modifyPod('default', 'b', (p) => (p.metadata!.labels = { app: 'other' }));
      server.deletePod('default', 'a');
      await waitUntil('all events arrive', () => seen.length === 5);
      expect(seen).to.deep.equal(['add a', 'add b', 'update a Failed', 'delete b', 'delete a']);
      expect(informer.list()).to.deep.equal([]);
    } finally {
      await informer.stop();
    }
  });

  it('replays a watch from a resourceVersion, with selector transitions and bookmarks', async () => {
    const start = server.addPod(pod('a', { node: 'n1' })).metadata?.resourceVersion ?? '';
    server.addPod(pod('b', { node: 'n2' }));
    server.modifyPod('default', 'b', (p) => (p.spec!.nodeName = 'n1')); // enters spec.nodeName=n1
    server.modifyPod('default', 'a', (p) => (p.spec!.nodeName = 'n2')); // leaves it
    const w = await watch(kc, '/api/v1/pods', { fieldSelector: 'spec.nodeName=n1', resourceVersion: start, allowWatchBookmarks: true });
    try {
      await waitUntil('the replay arrives', () => w.events.length === 2);
      expect(w.events.map((e) => `${e.type} ${e.name}`)).to.deep.equal(['ADDED b', 'DELETED a']);
      expect(Number(w.events[1].rv)).to.equal(Number(server.resourceVersion));
      server.sendBookmarks();
      await waitUntil('a bookmark arrives', () => w.events.length === 3);
      expect(w.events[2]).to.include({ type: 'BOOKMARK', rv: server.resourceVersion });
      server.closeWatches();
      await waitUntil('the watch ends', () => w.ended() !== 'open');
      expect(w.ended()).to.equal(null);
    } finally {
      w.abort();
    }
  });

  it('starts a watch without a version with the current pods as ADDED', async () => {
    server.addPod(pod('a', { node: 'n1' }));
    server.addPod(pod('b', { node: 'n2' }));
    const w = await watch(kc, '/api/v1/pods', { fieldSelector: 'spec.nodeName=n1' });
    try {
      await waitUntil('the initial events arrive', () => w.events.length === 1);
      server.addPod(pod('c', { node: 'n1' }));
      await waitUntil('the new pod arrives', () => w.events.length === 2);
      expect(w.events.map((e) => `${e.type} ${e.name}`)).to.deep.equal(['ADDED a', 'ADDED c']);
    } finally {
      w.abort();
    }
  });

  it('ends the initial events with a bookmark when asked, and a watch after timeoutSeconds', async () => {
    server.addPod(pod('a'));
    const w = await watch(kc, '/api/v1/namespaces/default/pods', { sendInitialEvents: true, allowWatchBookmarks: true, timeoutSeconds: '1' });
    try {
      await waitUntil('the initial events arrive', () => w.events.length === 2);
      expect(w.events[0]).to.include({ type: 'ADDED', name: 'a' });
      expect(w.events[1]).to.deep.include({ type: 'BOOKMARK', annotations: { 'k8s.io/initial-events-end': 'true' } });
      await waitUntil('the watch times out', () => w.ended() !== 'open', 3000);
      expect(w.events.at(-1)?.type).to.equal('BOOKMARK');
      expect(server.watchCount).to.equal(0);
    } finally {
      w.abort();
    }
  });

  it('expires compacted versions: a watch from one gets 410, an informer relists and catches up', async () => {
    const first = server.addPod(pod('a')).metadata?.resourceVersion ?? '';
    server.addPod(pod('b'));
    server.compact();
    const w = await watch(kc, '/api/v1/pods', { resourceVersion: first });
    await waitUntil('the watch ends', () => w.ended() !== 'open');
    expect(w.events.map((e) => e.type)).to.deep.equal(['ERROR']);

    const informer = k8s.makeInformer<k8s.V1Pod>(kc, '/api/v1/pods', () => api.listPodForAllNamespaces());
    const seen: string[] = [];
    informer.on('add', (p) => seen.push(`add ${p.metadata?.name}`));
    informer.on('delete', (p) => seen.push(`delete ${p.metadata?.name}`));
    informer.on('error', () => undefined); // stopping aborts the watch, which is reported
    const lists = () => server.requestsTo('GET', '/api/v1/pods').filter((r) => r.query.watch !== 'true').length;
    try {
      await informer.start();
      expect(seen).to.deep.equal(['add a', 'add b']);
      await informer.stop();
      // While it is away: changes, then the history is gone; it comes back with its old version.
      server.deletePod('default', 'a');
      server.addPod(pod('c'));
      server.compact();
      await informer.start();
      await waitUntil('the informer relists after 410', () => lists() === 2 && seen.length === 4);
      expect(seen).to.deep.equal(['add a', 'add b', 'delete a', 'add c']);
    } finally {
      await informer.stop();
    }
  });

  it('injects failures for chosen requests', async () => {
    server.addPod(pod('a'));
    server.failNext('GET', '/api/v1/pods', 503);
    expect((await apiError(api.listPodForAllNamespaces())).code).to.equal(503);
    expect((await api.listPodForAllNamespaces()).items).to.have.length(1);
  });

  it('serves HTTPS that only a client trusting its CA accepts, or plain HTTP when asked', async () => {
    server.addPod(pod('a'));
    expect(server.url).to.match(/^https:\/\/127\.0\.0\.1:\d+$/);
    const untrusting = orchConfigFor(server.url);
    let failure: unknown;
    try {
      await untrusting.makeApiClient(k8s.CoreV1Api).listPodForAllNamespaces();
    } catch (err) {
      failure = err;
    }
    expect(String(failure)).to.match(/certificate/i);
    const plain = new OrchApiServer({ plainHttp: true });
    await plain.start();
    try {
      plain.addPod(pod('b'));
      expect(plain.url).to.match(/^http:\/\//);
      const items = (await plain.kubeConfig().makeApiClient(k8s.CoreV1Api).listPodForAllNamespaces()).items;
      expect(items.map((p) => p.metadata?.name)).to.deep.equal(['b']);
    } finally {
      await plain.stop();
    }
  });

  it('checks a bearer token when configured', async () => {
    await server.stop();
    server = new OrchApiServer({ token: 's3cret' });
    await server.start();
    server.addPod(pod('a'));
    const anonymous = await apiError(server.kubeConfig().makeApiClient(k8s.CoreV1Api).listPodForAllNamespaces());
    expect(anonymous.code).to.equal(401);
    expect(server.requests.at(-1)?.path).to.equal('/api/v1/pods');
    const withToken = await server.kubeConfig('s3cret').makeApiClient(k8s.CoreV1Api).listPodForAllNamespaces();
    expect(withToken.items).to.have.length(1);
  });
});
