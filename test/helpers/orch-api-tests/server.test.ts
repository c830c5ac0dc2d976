import { expect } from 'chai';
import * as k8s from '@kubernetes/client-node';
import { type OrchApiServer, startOrchApiServer } from '../orch-api';
import { makeServingIdentity } from '../orch-api/tls';
import { apiError, request } from './support';

describe('orch API server: TLS, authentication, discovery, CRUD and lists', () => {
  let server: OrchApiServer;
  let core: k8s.CoreV1Api;

  before(async () => {
    server = await startOrchApiServer({ simulateCluster: false });
    core = server.kubeConfig().makeApiClient(k8s.CoreV1Api);
  });
  after(() => server.stop());

  describe('TLS and authentication', () => {
    it('serves HTTPS with a certificate from its own CA, which another CA does not verify', async () => {
      expect(server.url).to.match(/^https:\/\/127\.0\.0\.1:\d+$/);
      expect((await request(server, 'GET', '/version')).json.gitVersion).to.match(/^v1\.32\./);
      const other = await makeServingIdentity(['127.0.0.1']);
      const err = await request(server, 'GET', '/version', { ca: other.caPem }).then(
        () => undefined,
        (e: Error) => e,
      );
      expect(err?.message).to.match(/self[- ]signed|unable to verify|certificate/i);
    });

    it('answers 401 with an Unauthorized Status without the bearer token, and health endpoints to anyone', async () => {
      const res = await request(server, 'GET', '/api/v1/namespaces', { token: '' });
      expect(res.status).to.equal(401);
      expect(res.json).to.include({ kind: 'Status', status: 'Failure', reason: 'Unauthorized', code: 401 });
      expect((await request(server, 'GET', '/api/v1/namespaces', { token: 'wrong' })).status).to.equal(401);
      for (const path of ['/healthz', '/readyz', '/livez']) {
        const health = await request(server, 'GET', path, { token: '' });
        expect([health.status, health.text]).to.deep.equal([200, 'ok']);
      }
    });
  });

  describe('discovery', () => {
    it('lists the core version, the groups and each group version\'s resources with subresources', async () => {
      expect((await request(server, 'GET', '/api')).json).to.include({ kind: 'APIVersions' }).and.have.deep.property('versions', ['v1']);
      const core = (await request(server, 'GET', '/api/v1')).json;
      const names = core.resources.map((r: { name: string }) => r.name);
      expect(names).to.include.members(['pods', 'pods/status', 'services', 'endpoints', 'configmaps', 'secrets', 'serviceaccounts', 'serviceaccounts/token', 'nodes', 'namespaces']);
      const pods = core.resources.find((r: { name: string }) => r.name === 'pods');
      expect(pods).to.include({ kind: 'Pod', namespaced: true, singularName: 'pod' });
      expect(pods.shortNames).to.deep.equal(['po']);
      const token = core.resources.find((r: { name: string }) => r.name === 'serviceaccounts/token');
      expect(token).to.include({ kind: 'TokenRequest', group: 'authentication.k8s.io', version: 'v1' });
      const groups = (await request(server, 'GET', '/apis')).json.groups.map((g: { name: string }) => g.name);
      expect(groups).to.include.members(['apps', 'batch', 'discovery.k8s.io', 'coordination.k8s.io', 'admissionregistration.k8s.io', 'apiextensions.k8s.io']);
      const apps = (await request(server, 'GET', '/apis/apps')).json;
      expect(apps.preferredVersion).to.deep.equal({ groupVersion: 'apps/v1', version: 'v1' });
      const leases = (await request(server, 'GET', '/apis/coordination.k8s.io/v1')).json.resources.find((r: { name: string }) => r.name === 'leases');
      expect(leases).to.include({ kind: 'Lease', namespaced: true });
      expect((await request(server, 'GET', '/apis/nothing.example.com/v1')).status).to.equal(404);
    });

    it('answers aggregated discovery (apidiscovery.k8s.io/v2) when asked for it', async () => {
      const accept = 'application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList,application/json';
      const res = await request(server, 'GET', '/apis', { accept });
      expect(res.headers['content-type']).to.equal('application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList');
      expect(res.json.kind).to.equal('APIGroupDiscoveryList');
      const apps = res.json.items.find((i: { metadata: { name: string } }) => i.metadata.name === 'apps');
      const deployments = apps.versions[0].resources.find((r: { resource: string }) => r.resource === 'deployments');
      expect(deployments).to.include({ scope: 'Namespaced', singularResource: 'deployment' });
      expect(deployments.subresources.map((s: { subresource: string }) => s.subresource)).to.deep.equal(['status', 'scale']);
      const coreRes = await request(server, 'GET', '/api', { accept });
      expect(coreRes.json.items[0].versions[0].resources.map((r: { resource: string }) => r.resource)).to.include('pods');
    });
  });

  describe('create, get, update, delete', () => {
    it('creates with uid, creationTimestamp and a resourceVersion that only grows; answers Status objects for errors', async () => {
      const a = await core.createNamespacedConfigMap({ namespace: 'default', body: { metadata: { name: 'crud-a' }, data: { k: 'v' } } });
      expect(a.metadata?.uid).to.match(/^[0-9a-f-]{36}$/);
      expect(a.metadata?.creationTimestamp).to.be.instanceOf(Date);
      const b = await core.createNamespacedConfigMap({ namespace: 'default', body: { metadata: { generateName: 'crud-' } } });
      expect(b.metadata?.name).to.match(/^crud-[a-z0-9]{5}$/);
      expect(Number(b.metadata?.resourceVersion)).to.be.greaterThan(Number(a.metadata?.resourceVersion));
      const exists = await apiError(core.createNamespacedConfigMap({ namespace: 'default', body: { metadata: { name: 'crud-a' } } }));
      expect(exists.code).to.equal(409);
      expect(exists.status).to.deep.include({ kind: 'Status', reason: 'AlreadyExists', message: 'configmaps "crud-a" already exists', code: 409 });
      expect(exists.status.details).to.deep.equal({ name: 'crud-a', kind: 'configmaps' });
      const missing = await apiError(core.readNamespacedConfigMap({ namespace: 'default', name: 'nope' }));
      expect(missing.status).to.deep.include({ reason: 'NotFound', message: 'configmaps "nope" not found', code: 404 });
    });

    it('refuses objects in a namespace that does not exist, as the real server does (404 for the namespace)', async () => {
      const err = await apiError(core.createNamespacedConfigMap({ namespace: 'ghost', body: { metadata: { name: 'x' } } }));
      expect(err.code).to.equal(404);
      expect(err.status.message).to.equal('namespaces "ghost" not found');
      expect((await core.readNamespace({ name: 'kube-system' })).status?.phase).to.equal('Active');
    });

    it('rejects a stale resourceVersion on update with 409 Conflict and accepts the current one', async () => {
      const cm = await core.createNamespacedConfigMap({ namespace: 'default', body: { metadata: { name: 'crud-conflict' }, data: { n: '1' } } });
      const updated = await core.replaceNamespacedConfigMap({ namespace: 'default', name: 'crud-conflict', body: { ...cm, data: { n: '2' } } });
      const stale = await apiError(core.replaceNamespacedConfigMap({ namespace: 'default', name: 'crud-conflict', body: { ...cm, data: { n: '3' } } }));
      expect(stale.code).to.equal(409);
      expect(stale.status.reason).to.equal('Conflict');
      expect(stale.status.message).to.equal('Operation cannot be fulfilled on configmaps "crud-conflict": the object has been modified; please apply your changes to the latest version and try again');
      expect(updated.data).to.deep.equal({ n: '2' });
    });

    it('validates names with the real message (422 Invalid with the field path)', async () => {
      const err = await apiError(core.createNamespacedConfigMap({ namespace: 'default', body: { metadata: { name: 'Bad_Name' } } }));
      expect(err.code).to.equal(422);
      expect(err.status.reason).to.equal('Invalid');
      expect(err.status.message).to.match(/^ConfigMap "Bad_Name" is invalid: metadata.name: Invalid value: "Bad_Name": a lowercase RFC 1123 subdomain/);
      expect(err.status.details.causes[0]).to.include({ field: 'metadata.name', reason: 'FieldValueInvalid' });
    });

    it('bumps metadata.generation on spec changes only, and accepts fieldValidation', async () => {
      const apps = server.kubeConfig().makeApiClient(k8s.AppsV1Api);
      const body: k8s.V1Deployment = {
        metadata: { name: 'gen' },
        spec: { selector: { matchLabels: { app: 'gen' } }, template: { metadata: { labels: { app: 'gen' } }, spec: { containers: [{ name: 'c', image: 'img:1' }] } } },
      };
      const created = await apps.createNamespacedDeployment({ namespace: 'default', body, fieldValidation: 'Strict' });
      expect(created.metadata?.generation).to.equal(1);
      const labelled = await apps.patchNamespacedDeployment({ namespace: 'default', name: 'gen', body: { metadata: { labels: { x: 'y' } } } }, k8s.setHeaderOptions('Content-Type', k8s.PatchStrategy.MergePatch));
      expect(labelled.metadata?.generation).to.equal(1);
      const scaled = await apps.patchNamespacedDeployment({ namespace: 'default', name: 'gen', body: { spec: { replicas: 5 } } }, k8s.setHeaderOptions('Content-Type', k8s.PatchStrategy.MergePatch));
      expect(scaled.metadata?.generation).to.equal(2);
    });

    it('deletes with preconditions and cascades to dependents unless orphaned', async () => {
      const owner = await core.createNamespacedConfigMap({ namespace: 'default', body: { metadata: { name: 'owner' } } });
      const ref = { apiVersion: 'v1', kind: 'ConfigMap', name: 'owner', uid: owner.metadata!.uid! };
      await core.createNamespacedSecret({ namespace: 'default', body: { metadata: { name: 'dependent', ownerReferences: [ref] } } });
      const wrong = await apiError(core.deleteNamespacedConfigMap({ namespace: 'default', name: 'owner', body: { preconditions: { uid: 'not-it' } } }));
      expect(wrong.code).to.equal(409);
      await core.deleteNamespacedConfigMap({ namespace: 'default', name: 'owner' });
      expect(server.get('v1', 'Secret', 'default', 'dependent')).to.equal(undefined);

      const owner2 = await core.createNamespacedConfigMap({ namespace: 'default', body: { metadata: { name: 'owner2' } } });
      await core.createNamespacedSecret({ namespace: 'default', body: { metadata: { name: 'orphan', ownerReferences: [{ ...ref, name: 'owner2', uid: owner2.metadata!.uid! }] } } });
      await core.deleteNamespacedConfigMap({ namespace: 'default', name: 'owner2', propagationPolicy: 'Orphan' });
      const orphan = server.get('v1', 'Secret', 'default', 'orphan');
      expect(orphan.metadata.ownerReferences).to.equal(undefined);
    });

    it('deleting a namespace deletes what is in it', async () => {
      await core.createNamespace({ body: { metadata: { name: 'doomed' } } });
      await core.createNamespacedConfigMap({ namespace: 'doomed', body: { metadata: { name: 'a' } } });
      await core.deleteNamespace({ name: 'doomed' });
      expect(server.get('v1', 'Namespace', undefined, 'doomed')).to.equal(undefined);
      expect(server.list('v1', 'ConfigMap', 'doomed')).to.deep.equal([]);
    });

    it('keeps finalized objects until their finalizers are removed', async () => {
      await core.createNamespacedConfigMap({ namespace: 'default', body: { metadata: { name: 'held', finalizers: ['test/hold'] } } });
      await core.deleteNamespacedConfigMap({ namespace: 'default', name: 'held' });
      const marked = await core.readNamespacedConfigMap({ namespace: 'default', name: 'held' });
      expect(marked.metadata?.deletionTimestamp).to.be.instanceOf(Date);
      await core.patchNamespacedConfigMap({ namespace: 'default', name: 'held', body: { metadata: { finalizers: null } } }, k8s.setHeaderOptions('Content-Type', k8s.PatchStrategy.MergePatch));
      expect(server.get('v1', 'ConfigMap', 'default', 'held')).to.equal(undefined);
    });

    it('update() taking the last finalizer off a deleted pod removes it, status and all', async () => {
      const pod = { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'held-pod', namespace: 'default', finalizers: ['test/hold'] }, spec: { containers: [{ name: 'c', image: 'i' }] }, status: { phase: 'Running' } };
      await server.create(pod);
      await server.delete('v1', 'Pod', 'default', 'held-pod');
      const marked = server.get('v1', 'Pod', 'default', 'held-pod');
      expect(marked.metadata.deletionTimestamp).to.be.a('string');
      await server.update({ ...marked, metadata: { ...marked.metadata, finalizers: [] } });
      expect(server.get('v1', 'Pod', 'default', 'held-pod')).to.equal(undefined);
    });

    it('assigns Services a cluster IP (10.96.x.y) unless headless, and keeps it on update', async () => {
      const svc = await core.createNamespacedService({ namespace: 'default', body: { metadata: { name: 'svc-ip' }, spec: { selector: { a: 'b' }, ports: [{ port: 80 }] } } });
      expect(svc.spec?.clusterIP).to.match(/^10\.96\.\d+\.\d+$/);
      expect(svc.spec?.ports?.[0]).to.include({ protocol: 'TCP', targetPort: 80 });
      const headless = await core.createNamespacedService({ namespace: 'default', body: { metadata: { name: 'svc-none' }, spec: { clusterIP: 'None', ports: [{ port: 80 }] } } });
      expect(headless.spec?.clusterIP).to.equal('None');
      const replaced = await core.replaceNamespacedService({ namespace: 'default', name: 'svc-ip', body: { ...svc, spec: { ...svc.spec, clusterIP: undefined, clusterIPs: undefined } } });
      expect(replaced.spec?.clusterIP).to.equal(svc.spec?.clusterIP);
    });
  });

  describe('hostile input', () => {
    it('answers malformed, mistyped and oversized bodies with a Status error, and keeps serving', async () => {
      const bad = await request(server, 'POST', '/api/v1/namespaces/default/configmaps', { body: '{"metadata":' });
      expect(bad.status).to.equal(400);
      expect(bad.json).to.include({ kind: 'Status', reason: 'BadRequest' });
      const wrongKind = await request(server, 'POST', '/api/v1/namespaces/default/configmaps', { body: { apiVersion: 'v1', kind: 'Secret', metadata: { name: 'x' } } });
      expect(wrongKind.status).to.equal(400);
      const array = await request(server, 'POST', '/api/v1/namespaces/default/configmaps', { body: [] });
      expect(array.status).to.equal(400);
      const bomb = ['a: &a [x, x, x, x, x, x, x, x, x]', ...Array.from({ length: 8 }, (_, i) => `${String.fromCharCode(98 + i)}: &${String.fromCharCode(98 + i)} [*${String.fromCharCode(97 + i)}, *${String.fromCharCode(97 + i)}, *${String.fromCharCode(97 + i)}, *${String.fromCharCode(97 + i)}, *${String.fromCharCode(97 + i)}, *${String.fromCharCode(97 + i)}, *${String.fromCharCode(97 + i)}, *${String.fromCharCode(97 + i)}, *${String.fromCharCode(97 + i)}]`)].join('\n');
      const aliases = await request(server, 'PATCH', '/api/v1/namespaces/default/configmaps/bomb?fieldManager=t', { body: bomb, contentType: 'application/apply-patch+yaml' });
      expect(aliases.status).to.equal(400);
      const huge = await request(server, 'POST', '/api/v1/namespaces/default/configmaps', { body: { metadata: { name: 'huge' }, data: { big: 'x'.repeat(9 * 1024 * 1024) } } }).catch((e: Error) => e);
      if (!(huge instanceof Error)) expect(huge.status).to.equal(413);
      expect((await request(server, 'GET', '/api/v1/namespaces/default/configmaps')).status).to.equal(200);
    });
  });

  describe('lists', () => {
    before(async () => {
      await core.createNamespace({ body: { metadata: { name: 'lists' } } });
      const labels: Record<string, string>[] = [{ tier: 'web', env: 'prod' }, { tier: 'db', env: 'prod' }, { tier: 'web' }, { env: 'dev' }, {}];
      for (let i = 0; i < labels.length; i++) await core.createNamespacedConfigMap({ namespace: 'lists', body: { metadata: { name: `cm-${i}`, labels: labels[i] } } });
    });

    const names = (list: k8s.V1ConfigMapList) => list.items.map((i) => i.metadata?.name);

    it('selects by labels: =, !=, in, notin, exists and !key', async () => {
      const by = async (labelSelector: string) => names(await core.listNamespacedConfigMap({ namespace: 'lists', labelSelector }));
      expect(await by('tier=web')).to.deep.equal(['cm-0', 'cm-2']);
      expect(await by('tier in (web,db),env=prod')).to.deep.equal(['cm-0', 'cm-1']);
      expect(await by('env notin (prod)')).to.deep.equal(['cm-2', 'cm-3', 'cm-4']);
      expect(await by('!tier')).to.deep.equal(['cm-3', 'cm-4']);
      expect(await by('env,tier!=db')).to.deep.equal(['cm-0', 'cm-3']);
      const bad = await apiError(core.listNamespacedConfigMap({ namespace: 'lists', labelSelector: 'tier in web' }));
      expect(bad.code).to.equal(400);
    });

    it('selects by metadata.name/namespace and pods by spec.nodeName; other fields are refused', async () => {
      expect(names(await core.listConfigMapForAllNamespaces({ fieldSelector: 'metadata.namespace=lists,metadata.name!=cm-0' }))).to.deep.equal(['cm-1', 'cm-2', 'cm-3', 'cm-4']);
      await core.createNamespacedPod({ namespace: 'lists', body: { metadata: { name: 'p1' }, spec: { nodeName: 'n1', containers: [{ name: 'c', image: 'i' }] } } });
      await core.createNamespacedPod({ namespace: 'lists', body: { metadata: { name: 'p2' }, spec: { nodeName: 'n2', containers: [{ name: 'c', image: 'i' }] } } });
      const pods = await core.listPodForAllNamespaces({ fieldSelector: 'spec.nodeName=n2' });
      expect(pods.items.map((p) => p.metadata?.name)).to.deep.equal(['p2']);
      const bad = await apiError(core.listNamespacedConfigMap({ namespace: 'lists', fieldSelector: 'data.x=1' }));
      expect(bad.status.message).to.equal('unable to parse requirement: field label not supported: data.x');
    });

    it('pages with limit and continue, telling the remaining count', async () => {
      const first = await core.listNamespacedConfigMap({ namespace: 'lists', limit: 2 });
      expect(names(first)).to.deep.equal(['cm-0', 'cm-1']);
      expect(first.metadata?.remainingItemCount).to.equal(3);
      const second = await core.listNamespacedConfigMap({ namespace: 'lists', limit: 2, _continue: first.metadata?._continue });
      expect(names(second)).to.deep.equal(['cm-2', 'cm-3']);
      const third = await core.listNamespacedConfigMap({ namespace: 'lists', limit: 2, _continue: second.metadata?._continue });
      expect(names(third)).to.deep.equal(['cm-4']);
      expect(third.metadata?._continue).to.equal(undefined);
      expect(third.metadata?.resourceVersion).to.equal(first.metadata?.resourceVersion);
    });

    it('lists at an exact older resourceVersion, and answers 504 for one from the future', async () => {
      const before = await core.listNamespacedConfigMap({ namespace: 'lists' });
      await core.deleteNamespacedConfigMap({ namespace: 'lists', name: 'cm-4' });
      await core.createNamespacedConfigMap({ namespace: 'lists', body: { metadata: { name: 'cm-5' } } });
      const exact = await core.listNamespacedConfigMap({ namespace: 'lists', resourceVersion: before.metadata?.resourceVersion, resourceVersionMatch: 'Exact' });
      expect(names(exact)).to.deep.equal(names(before));
      const now = await core.listNamespacedConfigMap({ namespace: 'lists', resourceVersion: before.metadata?.resourceVersion, resourceVersionMatch: 'NotOlderThan' });
      expect(names(now)).to.include('cm-5');
      const future = await apiError(core.listNamespacedConfigMap({ namespace: 'lists', resourceVersion: '99999999' }));
      expect(future.code).to.equal(504);
      expect(future.status.message).to.match(/^Too large resource version: 99999999, current: \d+$/);
    });

    it('deletes a collection by selector', async () => {
      await core.deleteCollectionNamespacedConfigMap({ namespace: 'lists', labelSelector: 'env=prod' });
      expect(server.list('v1', 'ConfigMap', 'lists').map((c) => c.metadata.name)).to.deep.equal(['cm-2', 'cm-3', 'cm-5']);
    });

    it('records requests with their verb and resource', () => {
      expect(server.requests.count({ verb: 'list', resource: 'configmaps' })).to.be.greaterThan(5);
      expect(server.requests.count({ verb: 'deletecollection' })).to.equal(1);
      expect(server.requests.log.at(-1)).to.include({ method: 'DELETE', path: '/api/v1/namespaces/lists/configmaps' });
    });

    it('records the content type and body of a request, parsed when JSON', async () => {
      await server.create({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'logged', namespace: 'default' }, data: { a: '1' } });
      const patch = { metadata: { labels: { seen: 'yes' } } };
      expect((await request(server, 'PATCH', '/api/v1/namespaces/default/configmaps/logged', { body: patch, contentType: 'application/merge-patch+json' })).status).to.equal(200);
      expect(server.requests.log.at(-1)).to.deep.include({ method: 'PATCH', contentType: 'application/merge-patch+json', body: patch, status: 200 });
      const options = { preconditions: { uid: 'not-it' } };
      expect((await apiError(core.deleteNamespacedConfigMap({ namespace: 'default', name: 'logged', body: options }))).code).to.equal(409);
      expect(server.requests.log.at(-1)).to.deep.include({ method: 'DELETE', contentType: 'application/json', body: options, status: 409 });
      await request(server, 'GET', '/api/v1/namespaces/default/configmaps/logged');
      const get = server.requests.log.at(-1)!;
      expect([get.contentType, get.body]).to.deep.equal([undefined, undefined]);
    });
  });
});
