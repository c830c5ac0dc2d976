import { expect } from 'chai';
import * as k8s from '@kubernetes/client-node';
import { type OrchApiServer, startOrchApiServer } from '../orch-api';
import { request } from './support';

const DEPLOYMENT = {
  apiVersion: 'apps/v1',
  kind: 'Deployment',
  metadata: { name: 'web', namespace: 'default' },
  spec: {
    replicas: 1,
    selector: { matchLabels: { app: 'web' } },
    template: {
      metadata: { labels: { app: 'web' } },
      spec: {
        containers: [
          { name: 'app', image: 'app:1', ports: [{ containerPort: 8080, name: 'http' }], env: [{ name: 'A', value: '1' }], volumeMounts: [{ name: 'v', mountPath: '/data' }] },
          { name: 'side', image: 'side:1' },
        ],
        volumes: [{ name: 'v', emptyDir: {} }],
      },
    },
  },
};

describe('orch API server: patches and server-side apply', () => {
  let server: OrchApiServer;
  const path = '/apis/apps/v1/namespaces/default/deployments/web';
  const patch = (contentType: string, body: unknown, query = '') => request(server, 'PATCH', path + query, { body, contentType });

  before(async () => {
    server = await startOrchApiServer({ simulateCluster: false });
  });
  after(() => server.stop());
  beforeEach(async () => {
    if (server.get('apps/v1', 'Deployment', 'default', 'web')) await server.delete('apps/v1', 'Deployment', 'default', 'web');
    await server.create(structuredClone(DEPLOYMENT));
  });

  it('merge patch (RFC 7386): maps merge, null removes, lists are replaced', async () => {
    const res = await patch('application/merge-patch+json', { metadata: { labels: { a: 'b' } }, spec: { replicas: 3, template: { spec: { volumes: null } } } });
    expect(res.status).to.equal(200);
    expect(res.json.metadata.labels).to.deep.equal({ a: 'b' });
    expect(res.json.spec.replicas).to.equal(3);
    expect(res.json.spec.template.spec.volumes).to.equal(undefined);
  });

  it('JSON patch (RFC 6902): operations in order; a failed test or a missing path is 422 and changes nothing', async () => {
    const res = await patch('application/json-patch+json', [
      { op: 'test', path: '/spec/replicas', value: 1 },
      { op: 'replace', path: '/spec/replicas', value: 2 },
      { op: 'add', path: '/spec/template/spec/containers/0/env/-', value: { name: 'B', value: '2' } },
      { op: 'remove', path: '/spec/template/spec/containers/1' },
    ]);
    expect(res.status).to.equal(200);
    expect(res.json.spec.replicas).to.equal(2);
    expect(res.json.spec.template.spec.containers.map((c: { name: string }) => c.name)).to.deep.equal(['app']);
    expect(res.json.spec.template.spec.containers[0].env).to.deep.equal([{ name: 'A', value: '1' }, { name: 'B', value: '2' }]);
    const failed = await patch('application/json-patch+json', [{ op: 'test', path: '/spec/replicas', value: 9 }]);
    expect(failed.status).to.equal(422);
    const missing = await patch('application/json-patch+json', [{ op: 'remove', path: '/spec/nothing' }]);
    expect(missing.status).to.equal(422);
    expect(server.get('apps/v1', 'Deployment', 'default', 'web').spec.replicas).to.equal(2);
  });

  it('strategic merge patch: containers by name, ports by containerPort, env by name, mounts by mountPath; $patch directives', async () => {
    const res = await patch('application/strategic-merge-patch+json', {
      spec: {
        template: {
          spec: {
            containers: [
              { name: 'app', image: 'app:2', ports: [{ containerPort: 9090, name: 'admin' }], env: [{ name: 'A', value: 'changed' }], volumeMounts: [{ mountPath: '/data', readOnly: true }] },
              { name: 'side', $patch: 'delete' },
              { name: 'new', image: 'new:1' },
            ],
          },
        },
      },
    });
    expect(res.status).to.equal(200);
    const containers = res.json.spec.template.spec.containers;
    expect(containers.map((c: { name: string }) => c.name)).to.deep.equal(['app', 'new']);
    expect(containers[0].image).to.equal('app:2');
    expect(containers[0].ports.map((p: { containerPort: number }) => p.containerPort)).to.deep.equal([8080, 9090]);
    expect(containers[0].env).to.deep.equal([{ name: 'A', value: 'changed' }]);
    expect(containers[0].volumeMounts).to.deep.equal([{ name: 'v', mountPath: '/data', readOnly: true }]);
    const replaced = await patch('application/strategic-merge-patch+json', { spec: { template: { spec: { containers: [{ $patch: 'replace' }, { name: 'only', image: 'o:1' }] } } } });
    expect(replaced.json.spec.template.spec.containers.map((c: { name: string }) => c.name)).to.deep.equal(['only']);
  });

  it('strategic merge patch is refused for custom resources (415), as the real server does', async () => {
    await server.create({
      apiVersion: 'apiextensions.k8s.io/v1',
      kind: 'CustomResourceDefinition',
      metadata: { name: 'gadgets.example.com' },
      spec: { group: 'example.com', scope: 'Namespaced', names: { plural: 'gadgets', kind: 'Gadget' }, versions: [{ name: 'v1', served: true, storage: true, schema: { openAPIV3Schema: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true } } }] },
    });
    await server.create({ apiVersion: 'example.com/v1', kind: 'Gadget', metadata: { name: 'g', namespace: 'default' }, spec: { a: 1 } });
    const res = await request(server, 'PATCH', '/apis/example.com/v1/namespaces/default/gadgets/g', { body: { spec: { a: 2 } }, contentType: 'application/strategic-merge-patch+json' });
    expect(res.status).to.equal(415);
    expect(res.json.reason).to.equal('UnsupportedMediaType');
  });

  it('server-side apply creates, merges with other writers, records managedFields and removes what the manager stops applying', async () => {
    const cmPath = '/api/v1/namespaces/default/configmaps/applied';
    const apply = (body: unknown, manager: string, force = false) => request(server, 'PATCH', `${cmPath}?fieldManager=${manager}${force ? '&force=true' : ''}`, { body, contentType: 'application/apply-patch+yaml' });
    const created = await apply({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'applied', labels: { a: '1' } }, data: { x: '1', y: '2' } }, 'tool-a');
    expect(created.status).to.equal(201);
    expect(created.json.metadata.managedFields[0]).to.deep.include({ manager: 'tool-a', operation: 'Apply', apiVersion: 'v1', fieldsType: 'FieldsV1' });
    expect(created.json.metadata.managedFields[0].fieldsV1).to.deep.equal({ 'f:data': { '.': {}, 'f:x': {}, 'f:y': {} }, 'f:metadata': { 'f:labels': { '.': {}, 'f:a': {} } } });
    const other = await apply({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'applied' }, data: { z: '3' } }, 'tool-b');
    expect(other.status).to.equal(200);
    expect(other.json.data).to.deep.equal({ x: '1', y: '2', z: '3' });
    const shrunk = await apply({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'applied', labels: { a: '1' } }, data: { x: '1' } }, 'tool-a');
    expect(shrunk.json.data).to.deep.equal({ x: '1', z: '3' });
    const conflict = await apply({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'applied' }, data: { z: 'mine' } }, 'tool-a');
    expect(conflict.status).to.equal(409);
    expect(conflict.json.message).to.equal('Apply failed with 1 conflict: conflict with "tool-b" using v1: .data.z');
    const forced = await apply({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'applied' }, data: { z: 'mine' } }, 'tool-a', true);
    expect(forced.status).to.equal(200);
    expect(forced.json.data).to.deep.equal({ z: 'mine' });
    expect(forced.json.metadata.managedFields.map((m: { manager: string }) => m.manager)).to.deep.equal(['tool-a']);
    const noManager = await request(server, 'PATCH', cmPath, { body: { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'applied' } }, contentType: 'application/apply-patch+yaml' });
    expect(noManager.status).to.equal(400);
  });

  it('server-side apply that changes nothing writes nothing: same resourceVersion, same managedFields time', async () => {
    const cmPath = '/api/v1/namespaces/default/configmaps/same';
    const body = { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'same', labels: { a: '1' } }, data: { x: '1' } };
    const apply = () => request(server, 'PATCH', `${cmPath}?fieldManager=tool&force=true`, { body, contentType: 'application/apply-patch+yaml' });
    const first = (await apply()).json as any;
    await new Promise((r) => setTimeout(r, 1100));
    const second = (await apply()).json as any;
    expect(second.metadata.resourceVersion).to.equal(first.metadata.resourceVersion);
    expect(second.metadata.managedFields).to.deep.equal(first.metadata.managedFields);
    const changed = (await request(server, 'PATCH', `${cmPath}?fieldManager=tool`, { body: { ...body, data: { x: '2' } }, contentType: 'application/apply-patch+yaml' })).json as any;
    expect(changed.metadata.resourceVersion).to.not.equal(first.metadata.resourceVersion);
  });

  it('server-side apply accepts YAML and merges keyed lists item by item', async () => {
    const yaml = [
      'apiVersion: apps/v1',
      'kind: Deployment',
      'metadata: {name: web, namespace: default}',
      'spec:',
      '  template:',
      '    spec:',
      '      containers:',
      '      - name: side',
      '        image: side:2',
    ].join('\n');
    const res = await request(server, 'PATCH', `${path}?fieldManager=yaml-tool`, { body: yaml, contentType: 'application/apply-patch+yaml' });
    expect(res.status).to.equal(200);
    expect(res.json.spec.template.spec.containers.map((c: { name: string; image: string }) => `${c.name}=${c.image}`)).to.deep.equal(['app=app:1', 'side=side:2']);
  });

  it('client-node patches with the apply content type work too', async () => {
    const core = server.kubeConfig().makeApiClient(k8s.CoreV1Api);
    const body = { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'from-client', namespace: 'default' }, data: { k: 'v' } };
    const applied = await core.patchNamespacedConfigMap({ name: 'from-client', namespace: 'default', body, fieldManager: 'client', force: true }, k8s.setHeaderOptions('Content-Type', k8s.PatchStrategy.ServerSideApply));
    expect(applied.data).to.deep.equal({ k: 'v' });
  });

  it('an unknown patch content type is 415 naming the accepted ones', async () => {
    const res = await patch('application/xml', '<x/>');
    expect(res.status).to.equal(415);
    expect(res.json.message).to.contain('application/strategic-merge-patch+json');
  });
});
