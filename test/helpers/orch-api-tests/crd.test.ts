import { expect } from 'chai';
import * as k8s from '@kubernetes/client-node';
import { type OrchApiServer, startOrchApiServer } from '../orch-api';
import { apiError, rawWatch, request, waitUntil } from './support';

const WIDGET_SCHEMA = {
  type: 'object',
  properties: {
    spec: {
      type: 'object',
      required: ['size'],
      properties: {
        size: { type: 'integer', minimum: 0 },
        mode: { type: 'string', enum: ['fast', 'slow'], default: 'slow' },
        tags: { type: 'array', items: { type: 'string' } },
        free: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true },
      },
    },
    status: { type: 'object', properties: { ready: { type: 'boolean' } } },
  },
};

const CRD = {
  apiVersion: 'apiextensions.k8s.io/v1',
  kind: 'CustomResourceDefinition',
  metadata: { name: 'widgets.example.com' },
  spec: {
    group: 'example.com',
    scope: 'Namespaced',
    names: { plural: 'widgets', singular: 'widget', kind: 'Widget', shortNames: ['wd'] },
    versions: [
      { name: 'v1', served: true, storage: true, subresources: { status: {} }, schema: { openAPIV3Schema: WIDGET_SCHEMA } },
      { name: 'v1beta1', served: true, storage: false, subresources: { status: {} }, schema: { openAPIV3Schema: WIDGET_SCHEMA } },
    ],
  },
};

describe('orch API server: CustomResourceDefinitions and custom objects', () => {
  let server: OrchApiServer;
  let custom: k8s.CustomObjectsApi;

  before(async () => {
    server = await startOrchApiServer({ simulateCluster: false });
    custom = server.kubeConfig().makeApiClient(k8s.CustomObjectsApi);
    const ext = server.kubeConfig().makeApiClient(k8s.ApiextensionsV1Api);
    // Raw JSON: the typed client would drop schema keys it names differently (default, enum, x-kubernetes-*).
    expect((await request(server, 'POST', '/apis/apiextensions.k8s.io/v1/customresourcedefinitions', { body: CRD })).status).to.equal(201);
    const created = await ext.readCustomResourceDefinition({ name: 'widgets.example.com' });
    expect(created.status?.conditions?.find((c) => c.type === 'Established')?.status).to.equal('True');
    expect(created.status?.acceptedNames?.kind).to.equal('Widget');
  });
  after(() => server.stop());

  it('registers the resource for every served version in discovery', async () => {
    expect((await request(server, 'GET', '/apis/example.com')).json.versions.map((v: { version: string }) => v.version)).to.deep.equal(['v1', 'v1beta1']);
    const resources = (await request(server, 'GET', '/apis/example.com/v1beta1')).json.resources;
    expect(resources.map((r: { name: string }) => r.name)).to.deep.equal(['widgets', 'widgets/status']);
    expect(resources[0]).to.include({ kind: 'Widget', namespaced: true, singularName: 'widget' });
  });

  it('stores an object once and serves it at every served version', async () => {
    await custom.createNamespacedCustomObject({ group: 'example.com', version: 'v1beta1', namespace: 'default', plural: 'widgets', body: { apiVersion: 'example.com/v1beta1', kind: 'Widget', metadata: { name: 'multi' }, spec: { size: 1 } } });
    const v1 = await custom.getNamespacedCustomObject({ group: 'example.com', version: 'v1', namespace: 'default', plural: 'widgets', name: 'multi' });
    expect(v1.apiVersion).to.equal('example.com/v1');
    expect(v1.spec).to.deep.equal({ size: 1, mode: 'slow' });
    const list = await custom.listNamespacedCustomObject({ group: 'example.com', version: 'v1beta1', namespace: 'default', plural: 'widgets' });
    expect(list.apiVersion).to.equal('example.com/v1beta1');
    expect(list.items[0].apiVersion).to.equal('example.com/v1beta1');
  });

  it('prunes unknown fields (keeping preserve-unknown-fields subtrees) and applies defaults; Strict validation refuses them', async () => {
    const created = await custom.createNamespacedCustomObject({
      group: 'example.com',
      version: 'v1',
      namespace: 'default',
      plural: 'widgets',
      body: { apiVersion: 'example.com/v1', kind: 'Widget', metadata: { name: 'pruned' }, spec: { size: 2, bogus: true, free: { any: { thing: 1 } } }, extra: 'x' },
    });
    expect(created.spec).to.deep.equal({ size: 2, mode: 'slow', free: { any: { thing: 1 } } });
    expect(created.extra).to.equal(undefined);
    const strict = await request(server, 'POST', '/apis/example.com/v1/namespaces/default/widgets?fieldValidation=Strict', {
      body: { apiVersion: 'example.com/v1', kind: 'Widget', metadata: { name: 'strict' }, spec: { size: 2, bogus: true } },
    });
    expect(strict.status).to.equal(400);
    expect(strict.json.message).to.equal('Widget in version "v1" cannot be handled as a Widget: strict decoding error: unknown field "spec.bogus"');
    const warned = await request(server, 'POST', '/apis/example.com/v1/namespaces/default/widgets?fieldValidation=Warn', {
      body: { apiVersion: 'example.com/v1', kind: 'Widget', metadata: { name: 'warned' }, spec: { size: 2, bogus: true } },
    });
    expect(warned.headers.warning).to.equal('299 - "unknown field \\"spec.bogus\\""');
  });

  it('validates against the schema: 422 Invalid with the real messages and field paths', async () => {
    const err = await apiError(
      custom.createNamespacedCustomObject({
        group: 'example.com',
        version: 'v1',
        namespace: 'default',
        plural: 'widgets',
        body: { apiVersion: 'example.com/v1', kind: 'Widget', metadata: { name: 'bad' }, spec: { size: 'big', mode: 'turbo', tags: ['ok', 3] } },
      }),
    );
    expect(err.code).to.equal(422);
    expect(err.status.reason).to.equal('Invalid');
    expect(err.status.details).to.deep.include({ name: 'bad', group: 'example.com', kind: 'Widget' });
    expect(err.status.details.causes).to.deep.equal([
      { reason: 'FieldValueInvalid', message: 'Invalid value: "string": spec.size in body must be of type integer: "string"', field: 'spec.size' },
      { reason: 'FieldValueNotSupported', message: 'Unsupported value: "turbo": supported values: "fast", "slow"', field: 'spec.mode' },
      { reason: 'FieldValueInvalid', message: 'Invalid value: "integer": spec.tags[1] in body must be of type string: "integer"', field: 'spec.tags[1]' },
    ]);
    expect(err.status.message).to.match(/^Widget.example.com "bad" is invalid: \[spec.size: Invalid value: "string": spec.size in body must be of type integer/);
    const missing = await apiError(custom.createNamespacedCustomObject({ group: 'example.com', version: 'v1', namespace: 'default', plural: 'widgets', body: { apiVersion: 'example.com/v1', kind: 'Widget', metadata: { name: 'bad2' }, spec: { size: -1 } } }));
    expect(missing.status.details.causes[0]).to.deep.include({ field: 'spec.size', message: 'Invalid value: -1: spec.size in body should be greater than or equal to 0' });
    const required = await apiError(custom.createNamespacedCustomObject({ group: 'example.com', version: 'v1', namespace: 'default', plural: 'widgets', body: { apiVersion: 'example.com/v1', kind: 'Widget', metadata: { name: 'bad3' }, spec: {} } }));
    expect(required.status.details.causes[0]).to.deep.equal({ reason: 'FieldValueRequired', message: 'Required value', field: 'spec.size' });
  });

  it('keeps status apart when the status subresource is declared', async () => {
    const created = await custom.createNamespacedCustomObject({ group: 'example.com', version: 'v1', namespace: 'default', plural: 'widgets', body: { apiVersion: 'example.com/v1', kind: 'Widget', metadata: { name: 'st' }, spec: { size: 1 }, status: { ready: true } } });
    expect(created.status).to.equal(undefined);
    const withStatus = await custom.replaceNamespacedCustomObjectStatus({ group: 'example.com', version: 'v1', namespace: 'default', plural: 'widgets', name: 'st', body: { ...created, spec: { size: 99 }, status: { ready: true } } });
    expect(withStatus.status).to.deep.equal({ ready: true });
    expect(withStatus.spec.size).to.equal(1);
    expect(withStatus.metadata.generation).to.equal(1);
    const specOnly = await custom.replaceNamespacedCustomObject({ group: 'example.com', version: 'v1', namespace: 'default', plural: 'widgets', name: 'st', body: { ...withStatus, spec: { size: 5 }, status: { ready: false } } });
    expect(specOnly.status).to.deep.equal({ ready: true });
    expect(specOnly.metadata.generation).to.equal(2);
  });

  it('serves cluster-scoped custom types', async () => {
    await server.create({
      apiVersion: 'apiextensions.k8s.io/v1',
      kind: 'CustomResourceDefinition',
      metadata: { name: 'clusterthings.example.com' },
      spec: { group: 'example.com', scope: 'Cluster', names: { plural: 'clusterthings', kind: 'ClusterThing' }, versions: [{ name: 'v1', served: true, storage: true, schema: { openAPIV3Schema: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true } } }] },
    });
    await custom.createClusterCustomObject({ group: 'example.com', version: 'v1', plural: 'clusterthings', body: { apiVersion: 'example.com/v1', kind: 'ClusterThing', metadata: { name: 'c1' }, anything: { goes: 1 } } });
    const got = await custom.getClusterCustomObject({ group: 'example.com', version: 'v1', plural: 'clusterthings', name: 'c1' });
    expect(got.anything).to.deep.equal({ goes: 1 });
    expect(got.metadata.namespace).to.equal(undefined);
    expect((await request(server, 'GET', '/apis/example.com/v1/namespaces/default/clusterthings')).status).to.equal(404);
  });

  it('deleting the CRD removes its objects, its watches end and discovery forgets it', async () => {
    await server.create({
      apiVersion: 'apiextensions.k8s.io/v1',
      kind: 'CustomResourceDefinition',
      metadata: { name: 'temps.example.com' },
      spec: { group: 'example.com', scope: 'Namespaced', names: { plural: 'temps', kind: 'Temp' }, versions: [{ name: 'v1', served: true, storage: true, schema: { openAPIV3Schema: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true } } }] },
    });
    await server.create({ apiVersion: 'example.com/v1', kind: 'Temp', metadata: { name: 't1', namespace: 'default' } });
    const w = await rawWatch(server, '/apis/example.com/v1/temps?watch=true');
    await waitUntil('the initial event', () => w.events.length === 1);
    await server.delete('apiextensions.k8s.io/v1', 'CustomResourceDefinition', undefined, 'temps.example.com');
    await waitUntil('the watch ends', () => w.ended());
    expect(w.events.map((e) => e.type)).to.deep.equal(['ADDED', 'DELETED']);
    expect((await request(server, 'GET', '/apis/example.com/v1/temps')).status).to.equal(404);
    const resources = (await request(server, 'GET', '/apis/example.com/v1')).json.resources.map((r: { name: string }) => r.name);
    expect(resources).to.not.include('temps');
  });

  it('watches custom objects through client-node informers', async () => {
    const kc = server.kubeConfig();
    const informer = k8s.makeInformer(kc, '/apis/example.com/v1/namespaces/default/widgets', () => custom.listNamespacedCustomObject({ group: 'example.com', version: 'v1', namespace: 'default', plural: 'widgets' }) as never);
    const added: string[] = [];
    informer.on('add', (o: k8s.KubernetesObject) => added.push(o.metadata?.name ?? ''));
    await informer.start();
    try {
      await custom.createNamespacedCustomObject({ group: 'example.com', version: 'v1', namespace: 'default', plural: 'widgets', body: { apiVersion: 'example.com/v1', kind: 'Widget', metadata: { name: 'watched' }, spec: { size: 1 } } });
      await waitUntil('the informer sees it', () => added.includes('watched'));
    } finally {
      await informer.stop();
    }
  });
});
