/**
 * `meshctl create-remote-secret` end to end: two in-process API servers are clusters A and B;
 * the secret made from B's config (service account created on B, token from B's TokenRequest
 * API) is applied to A with kubectl, and A's daemon then reads B's Services, which
 * `meshctl remote-clusters` reports as a synced cluster.
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { expect } from 'chai';
import { parse, parseAllDocuments } from 'yaml';
import { RunningDaemon } from '../../helpers/daemon';
import { httpGet } from '../../helpers/http';
import { kubectl, OrchWorld, runPod, startOrchDaemon, startOrchWorld, waitFor } from '../../helpers/orch-mesh';
import { runCli } from '../../helpers/run-cli';

// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Any = any;

async function serviceWithPod(world: OrchWorld, name: string, ip: string): Promise<void> {
  const s = world.server;
  const pod = await s.create({ apiVersion: 'v1', kind: 'Pod', metadata: { name: `${name}-0`, namespace: 'shop', labels: { app: name } }, spec: { containers: [{ name: 'app', image: 'app' }] } });
  await s.update({ ...pod, status: { phase: 'Running', podIP: ip, podIPs: [{ ip }] } });
  await s.create({ apiVersion: 'v1', kind: 'Service', metadata: { name, namespace: 'shop' }, spec: { selector: { app: name }, ports: [{ name: 'http', port: 80, targetPort: 8080 }] } });
  await s.create({
    apiVersion: 'discovery.k8s.io/v1',
    kind: 'EndpointSlice',
    metadata: { name: `${name}-0`, namespace: 'shop', labels: { 'kubernetes.io/service-name': name } },
    addressType: 'IPv4',
    endpoints: [{ addresses: [ip], conditions: { ready: true }, targetRef: { kind: 'Pod', name: `${name}-0`, namespace: 'shop' } }],
    ports: [{ name: 'http', port: 8080, protocol: 'TCP' }],
  });
}

function jwtClaims(token: string): Any {
  return JSON.parse(Buffer.from(token.split('.')[1], 'base64url').toString('utf8'));
}

describe('meshctl create-remote-secret (two clusters, end to end)', function () {
  this.timeout(120_000);
  let a: OrchWorld;
  let b: OrchWorld;
  let daemon: RunningDaemon | undefined;

  before(async () => {
    a = await startOrchWorld({ simulateCluster: false, namespaces: ['shop', 'mesh-system'] });
    b = await startOrchWorld({ simulateCluster: false, namespaces: ['shop', 'mesh-system'] });
    await serviceWithPod(b, 'stock', '10.2.0.9');
  });

  after(async () => {
    await daemon?.stop();
    await a?.close();
    await b?.close();
  });

  it('prints a secret for cluster B that the daemon of cluster A, once it is applied there, reads B through', async () => {
    const r = await runCli('meshctl', ['create-remote-secret', '--orchconfig', b.kubeconfig, '--name', 'cluster-b', '--create-service-account']);
    expect(r.stderr).to.equal('');
    expect(r.code).to.equal(0);
    const docs = parseAllDocuments(r.stdout).map((d) => d.toJS()).filter(Boolean);
    expect(docs).to.have.length(1);
    const secret = docs[0];
    expect(secret.metadata).to.deep.equal({
      name: 'mesh-remote-secret-cluster-b',
      namespace: 'mesh-system',
      labels: { 'mesh/multiCluster': 'true' },
      annotations: { 'networking.mesh.io/cluster': 'cluster-b' },
    });
    const config = parse(secret.stringData['cluster-b']);
    expect(config['current-context']).to.equal('cluster-b');
    expect(config.clusters[0].cluster.server).to.equal(b.server.url);
    expect(Buffer.from(config.clusters[0].cluster['certificate-authority-data'], 'base64').toString()).to.equal(b.server.caPem);
    expect(jwtClaims(config.users[0].user.token).sub).to.equal('system:serviceaccount:mesh-system:mesh-reader-service-account');

    // The service account and its reader role were created on B.
    expect(b.server.get('v1', 'ServiceAccount', 'mesh-system', 'mesh-reader-service-account')).to.not.equal(undefined);
    const role = b.server.get('rbac.authorization.k8s.io/v1', 'ClusterRole', '', 'mesh-reader-clusterrole-mesh-system');
    expect(role.rules.some((rule: Any) => rule.resources.includes('services') && rule.verbs.includes('watch'))).to.equal(true);

    const applied = await kubectl(a.kubeconfig, ['apply', '-f', '-'], r.stdout);
    expect(applied.stderr).to.equal('');
    expect(applied.stdout.trim()).to.equal('secret/mesh-remote-secret-cluster-b created');

    daemon = await startOrchDaemon(a, ['--clusterID', 'cluster-a']);
    const registry = await waitFor(
      async () => JSON.parse((await httpGet(daemon!.httpPort, '/debug/registryz')).body) as Any[],
      (services) => services.some((s) => s.hostname === 'stock.shop.svc.cluster.local'),
      "B's Service stock in A's registry",
    );
    const stock = registry.find((s) => s.hostname === 'stock.shop.svc.cluster.local');
    expect(stock.endpoints['80'].map((e: Any) => `${e.address} ${e.labels['topology.mesh.io/cluster']}`)).to.deep.equal(['10.2.0.9 cluster-b']);

    await runPod(a.server, { name: 'meshd-1', namespace: 'mesh-system', labels: { app: 'meshd', 'mesh.io/rev': 'default' }, ports: { 15014: daemon.monitoringPort } });
    const clusters = await runCli('meshctl', ['remote-clusters', '--orchconfig', a.kubeconfig]);
    expect(clusters.code).to.equal(0);
    expect(clusters.stdout).to.match(/^cluster-b\s+mesh-system\/mesh-remote-secret-cluster-b\s+synced\s+meshd-1\.mesh-system$/m);
  });

  it('names the cluster by the UID of the system namespace without --name, and uses a plugin instead of a token with --auth-type plugin', async () => {
    const r = await runCli('meshctl', [
      'create-remote-secret', '--orchconfig', b.kubeconfig, '--auth-type', 'plugin', '--auth-plugin-name', 'gcp', '--auth-plugin-config', 'scope=read,x=y', '--secret-name', 'other', '--server', 'https://b.example:6443',
    ]);
    expect([r.code, r.stderr]).to.deep.equal([0, '']);
    const secret = parseAllDocuments(r.stdout)[0].toJS();
    const uid = b.server.get('v1', 'Namespace', '', 'mesh-system').metadata.uid;
    expect(uid).to.be.a('string').and.not.equal('');
    expect(secret.metadata.name).to.equal('other');
    const config = parse(secret.stringData[uid]);
    expect(config.clusters[0].cluster.server).to.equal('https://b.example:6443');
    expect(config.users[0].user).to.deep.equal({ 'auth-provider': { name: 'gcp', config: { scope: 'read', x: 'y' } } });
  });

  it('prints a config secret labelled mesh/config authenticating as meshd with --type config', async () => {
    await b.server.create({ apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name: 'meshd', namespace: 'mesh-system' } });
    const r = await runCli('meshctl', ['create-remote-secret', '--orchconfig', b.kubeconfig, '--name', 'b', '--type', 'config']);
    expect([r.code, r.stderr]).to.deep.equal([0, '']);
    const secret = parseAllDocuments(r.stdout)[0].toJS();
    expect(secret.metadata.labels).to.deep.equal({ 'mesh/config': 'true' });
    expect(jwtClaims(parse(secret.stringData.b).users[0].user.token).sub).to.equal('system:serviceaccount:mesh-system:meshd');
  });

  it("uses the service account's legacy token Secret when it has one (it does not expire)", async () => {
    await b.server.create({ apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name: 'legacy', namespace: 'mesh-system' } });
    await b.server.create({
      apiVersion: 'v1',
      kind: 'Secret',
      type: 'kubernetes.io/service-account-token',
      metadata: { name: 'legacy-token', namespace: 'mesh-system', annotations: { 'kubernetes.io/service-account.name': 'legacy' } },
      data: { token: Buffer.from('legacy-token-value').toString('base64') },
    });
    const before = b.server.requests.log.length;
    const r = await runCli('meshctl', ['create-remote-secret', '--orchconfig', b.kubeconfig, '--name', 'b', '--service-account', 'legacy']);
    expect([r.code, r.stderr]).to.deep.equal([0, '']);
    expect(parse(parseAllDocuments(r.stdout)[0].toJS().stringData.b).users[0].user).to.deep.equal({ token: 'legacy-token-value' });
    expect(b.server.requests.log.slice(before).filter((q) => q.resource === 'serviceaccounts/token')).to.deep.equal([]);
  });

  it('takes the reader ClusterRole from --manifests', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'mesh-manifests-'));
    try {
      fs.writeFileSync(path.join(dir, 'reader.yaml'), 'kind: ConfigMap\n---\napiVersion: rbac.authorization.k8s.io/v1\nkind: ClusterRole\nmetadata: { name: mesh-reader-clusterrole }\nrules:\n- { apiGroups: [""], resources: [services], verbs: [list] }\n');
      const r = await runCli('meshctl', ['create-remote-secret', '--orchconfig', b.kubeconfig, '--name', 'b', '-i', 'shop', '--create-service-account', '-d', dir]);
      expect([r.code, r.stderr]).to.deep.equal([0, '']);
      expect(b.server.get('rbac.authorization.k8s.io/v1', 'ClusterRole', '', 'mesh-reader-clusterrole-shop').rules).to.deep.equal([{ apiGroups: [''], resources: ['services'], verbs: ['list'] }]);
      fs.writeFileSync(path.join(dir, 'reader.yaml'), 'a: &a [1]\nb: *a\n');
      const none = await runCli('meshctl', ['create-remote-secret', '--orchconfig', b.kubeconfig, '--name', 'b', '--create-service-account', '-d', dir]);
      expect([none.code, none.stdout, none.stderr.trim()]).to.deep.equal([1, '', `Error: --manifests ${dir}: no ClusterRole named mesh-reader... in its YAML files`]);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });

  it('fails with one line naming what is wrong', async () => {
    const cases: [string[], string][] = [
      [['--name', 'b', '--service-account', 'nobody'], 'Error: ServiceAccount mesh-system/nobody not found (create it with --create-service-account)'],
      [['--name', 'b', '--auth-type', 'plugin'], 'Error: --auth-plugin-name is required with --auth-type plugin'],
      [['--name', 'b', '--auth-plugin-name', 'gcp'], 'Error: --auth-plugin-name and --auth-plugin-config need --auth-type plugin'],
      [['--name', 'b/c'], `Error: --name "b/c": a cluster name may hold only letters, digits, '-', '_' and '.'`],
      [['--name', 'b', '--server', 'b.example:6443'], `Error: --server "b.example:6443": expected the API server's URL, e.g. https://host:6443`],
      [['-i', 'absent'], 'Error: cannot read Namespace absent for the cluster name (give it with --name)'],
    ];
    for (const [args, message] of cases) {
      const r = await runCli('meshctl', ['create-remote-secret', '--orchconfig', b.kubeconfig, ...args]);
      expect(r.code, args.join(' ')).to.equal(1);
      expect(r.stdout).to.equal('');
      expect(r.stderr.trim()).to.contain(message);
    }
  });
});
