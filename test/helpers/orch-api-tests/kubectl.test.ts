import { expect } from 'chai';
import { execFile, spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { type OrchApiServer, startOrchApiServer } from '../orch-api';
import { waitUntil } from './support';

/** Faithfulness: the real kubectl (v1.32) against the in-process server, unmodified. */

const KUBECTL = '/usr/bin/kubectl';

const CRD = `apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: widgets.example.com
spec:
  group: example.com
  scope: Namespaced
  names: {plural: widgets, singular: widget, kind: Widget, shortNames: [wd]}
  versions:
  - name: v1
    served: true
    storage: true
    additionalPrinterColumns:
    - {name: Size, type: integer, jsonPath: .spec.size}
    schema:
      openAPIV3Schema:
        type: object
        properties:
          spec:
            type: object
            properties:
              size: {type: integer}
`;

const APP = (replicas: number, value: string) => `apiVersion: v1
kind: Namespace
metadata: {name: shop}
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: web, namespace: shop}
spec:
  replicas: ${replicas}
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      containers:
      - name: app
        image: web:1
        ports: [{name: http, containerPort: 8080}]
        env: [{name: MODE, value: "${value}"}]
---
apiVersion: v1
kind: Service
metadata: {name: web, namespace: shop}
spec:
  selector: {app: web}
  ports: [{name: http, port: 80, targetPort: http}]
---
apiVersion: v1
kind: ConfigMap
metadata: {name: settings, namespace: shop}
data: {mode: "${value}"}
`;

describe('orch API server: the real kubectl against it', function () {
  this.timeout(60_000);
  let server: OrchApiServer;
  let dir: string;
  let kubeconfig: string;

  before(async function () {
    if (!fs.existsSync(KUBECTL)) {
      console.log(`      (skipped: ${KUBECTL} is not installed)`);
      this.skip();
    }
    server = await startOrchApiServer();
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'orch-kubectl-'));
    kubeconfig = server.writeKubeconfigFile(dir);
  });
  after(async () => {
    await server?.stop();
    if (dir) fs.rmSync(dir, { recursive: true, force: true });
  });

  function kubectl(args: string[], input?: string): Promise<{ code: number; stdout: string; stderr: string }> {
    return new Promise((resolve) => {
      const child = execFile(KUBECTL, ['--kubeconfig', kubeconfig, ...args], { timeout: 30_000, env: { ...process.env, HOME: dir } }, (err, stdout, stderr) => {
        resolve({ code: err ? ((err as { code?: number }).code ?? 1) : 0, stdout, stderr });
      });
      if (input !== undefined) child.stdin?.end(input);
    });
  }
  async function ok(args: string[], input?: string): Promise<string> {
    const r = await kubectl(args, input);
    if (r.code !== 0) throw new Error(`kubectl ${args.join(' ')} failed (${r.code}): ${r.stderr}`);
    return r.stdout;
  }

  it('applies a CRD, then a custom resource of it, and lists it by plural and short name', async () => {
    expect(await ok(['apply', '-f', '-'], CRD)).to.equal('customresourcedefinition.apiextensions.k8s.io/widgets.example.com created\n');
    expect(await ok(['apply', '-f', '-'], 'apiVersion: example.com/v1\nkind: Widget\nmetadata: {name: w1, namespace: default}\nspec: {size: 3}\n')).to.equal('widget.example.com/w1 created\n');
    const table = await ok(['get', 'widgets']);
    expect(table.split('\n')[0].split(/\s+/)).to.deep.equal(['NAME', 'SIZE', 'AGE']);
    expect(table.split('\n')[1]).to.match(/^w1\s+3\s+\d+s$/);
    expect(JSON.parse(await ok(['get', 'wd', 'w1', '-o', 'json'])).spec).to.deep.equal({ size: 3 });
    const invalid = await kubectl(['apply', '-f', '-'], 'apiVersion: example.com/v1\nkind: Widget\nmetadata: {name: w2, namespace: default}\nspec: {size: "big"}\n');
    expect(invalid.code).to.not.equal(0);
    expect(invalid.stderr).to.contain('spec.size: Invalid value: "string": spec.size in body must be of type integer: "string"');
  });

  it('applies a Namespace, Deployment, Service and ConfigMap, then applies a change as a patch', async () => {
    expect(await ok(['apply', '-f', '-'], APP(2, 'a'))).to.equal('namespace/shop created\ndeployment.apps/web created\nservice/web created\nconfigmap/settings created\n');
    await waitUntil('two pods', () => server.list('v1', 'Pod', 'shop').filter((p) => p.status?.podIP).length === 2, 10_000);
    const patches = server.requests.count({ verb: 'patch' });
    expect(await ok(['apply', '-f', '-'], APP(3, 'b'))).to.equal('namespace/shop unchanged\ndeployment.apps/web configured\nservice/web unchanged\nconfigmap/settings configured\n');
    expect(server.requests.count({ verb: 'patch' })).to.equal(patches + 2);
    expect(server.get('v1', 'ConfigMap', 'shop', 'settings').data).to.deep.equal({ mode: 'b' });
    const deploymentNow = server.get('apps/v1', 'Deployment', 'shop', 'web');
    expect(deploymentNow.spec.replicas).to.equal(3);
    expect(deploymentNow.spec.template.spec.containers[0].env).to.deep.equal([{ name: 'MODE', value: 'b' }]);
    await waitUntil('three pods', () => server.list('v1', 'Pod', 'shop').filter((p) => p.status?.podIP).length === 3, 10_000);
  });

  it('gets pods as JSON and as a table', async () => {
    const list = JSON.parse(await ok(['get', 'pods', '-n', 'shop', '-o', 'json']));
    expect(list.kind).to.equal('List');
    expect(list.items.length).to.equal(3);
    expect(list.items[0].status.phase).to.equal('Running');
    const table = await ok(['get', 'pods', '-n', 'shop']);
    expect(table.split('\n')[0].split(/\s+/)).to.deep.equal(['NAME', 'READY', 'STATUS', 'RESTARTS', 'AGE']);
    expect(table).to.match(/web-\S+\s+1\/1\s+Running\s+0/);
  });

  it('patches with --type merge and deletes', async () => {
    expect(await ok(['patch', 'configmap', 'settings', '-n', 'shop', '--type', 'merge', '-p', '{"data":{"extra":"1"}}'])).to.equal('configmap/settings patched\n');
    expect(server.get('v1', 'ConfigMap', 'shop', 'settings').data).to.deep.equal({ mode: 'b', extra: '1' });
    expect(await ok(['delete', 'configmap', 'settings', '-n', 'shop'])).to.equal('configmap "settings" deleted\n');
    expect(server.get('v1', 'ConfigMap', 'shop', 'settings')).to.equal(undefined);
  });

  it('sees a change with get -w, until it is killed', async () => {
    await server.create({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'watched', namespace: 'shop' }, data: { a: '1' } });
    const child = spawn(KUBECTL, ['--kubeconfig', kubeconfig, 'get', 'configmaps', '-n', 'shop', '-w', '-o', 'name'], { env: { ...process.env, HOME: dir } });
    let out = '';
    child.stdout.on('data', (c) => (out += c));
    try {
      await waitUntil('the initial listing', () => out.includes('configmap/watched'), 10_000);
      await server.update({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'watched', namespace: 'shop' }, data: { a: '2' } });
      await server.create({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'newcomer', namespace: 'shop' } });
      await waitUntil('the change', () => out.includes('configmap/newcomer') && out.split('configmap/watched').length >= 3, 10_000);
    } finally {
      child.kill('SIGTERM');
    }
  });

  it('applies on the server side', async () => {
    const out = await ok(['apply', '--server-side', '-f', '-'], APP(1, 'c'));
    expect(out).to.equal('namespace/shop serverside-applied\ndeployment.apps/web serverside-applied\nservice/web serverside-applied\nconfigmap/settings serverside-applied\n');
    const cm = server.get('v1', 'ConfigMap', 'shop', 'settings');
    expect(cm.data).to.deep.equal({ mode: 'c' });
    expect(cm.metadata.managedFields.map((m: { manager: string; operation: string }) => `${m.manager}/${m.operation}`)).to.deep.equal(['kubectl/Apply']);
    expect(server.get('apps/v1', 'Deployment', 'shop', 'web').spec.replicas).to.equal(1);
  });

  it('creates a namespace, a configmap, a secret and a service account (protobuf bodies)', async () => {
    expect(await ok(['create', 'namespace', 'made'])).to.equal('namespace/made created\n');
    expect(await ok(['create', 'configmap', 'c1', '-n', 'made', '--from-literal=a=1', '--from-literal=b=2'])).to.equal('configmap/c1 created\n');
    expect(await ok(['create', 'secret', 'generic', 's1', '-n', 'made', '--from-literal=password=hunter2'])).to.equal('secret/s1 created\n');
    expect(await ok(['create', 'serviceaccount', 'robot', '-n', 'made'])).to.equal('serviceaccount/robot created\n');
    expect(server.get('v1', 'ConfigMap', 'made', 'c1').data).to.deep.equal({ a: '1', b: '2' });
    expect(Buffer.from(server.get('v1', 'Secret', 'made', 's1').data.password, 'base64').toString()).to.equal('hunter2');
    const refused = await kubectl(['create', 'deployment', 'd', '-n', 'made', '--image=x']);
    expect(refused.code).to.not.equal(0);
    expect(refused.stderr).to.contain('send apps/v1/Deployment as JSON');
  });

  it('creates a service account token (TokenRequest)', async () => {
    await waitUntil('the default account', () => server.get('v1', 'ServiceAccount', 'shop', 'default') !== undefined);
    const token = (await ok(['create', 'token', 'default', '-n', 'shop', '--audience', 'mesh', '--duration', '2h'])).trim();
    const claims = JSON.parse(Buffer.from(token.split('.')[1], 'base64url').toString('utf8'));
    expect(claims.sub).to.equal('system:serviceaccount:shop:default');
    expect(claims.aud).to.deep.equal(['mesh']);
    expect(claims.exp - claims.iat).to.equal(7200);
  });
});
