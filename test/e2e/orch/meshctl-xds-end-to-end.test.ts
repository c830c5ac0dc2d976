import { expect } from 'chai';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import * as k8s from '@kubernetes/client-node';
import { RunningAgent, startAgent } from '../../helpers/agent';
import { RunningDaemon, startDaemon } from '../../helpers/daemon';
import { httpGet } from '../../helpers/http';
import { OrchApiServer, startOrchApiServer } from '../../helpers/orch-api';
import { orchTokenJwtRule, runPod } from '../../helpers/orch-mesh';
import { REPO_ROOT, runCli } from '../../helpers/run-cli';
import { usesSharedLoopbackNetwork } from '../../helpers/shared-network';

usesSharedLoopbackNetwork();

/**
 * meshctl's xDS commands as a user runs them on a cluster (issue 17), end to end through the
 * in-process orchestrator API: two daemon replicas registered as pods `meshd-a` and `meshd-b`
 * of mesh-system (label app=meshd, their xDS port 15012 forwarded to each daemon's secure
 * port), two agents with built-in proxies registered as pods (admin port 15000), one on each
 * replica. meshctl finds the daemons by label, reaches them through port-forwards, presents
 * a token of the mesh audience it got through TokenRequest (the daemons verify it with the API
 * server's keys), verifies them against the published mesh roots, and asks each.
 */

const VERSION = (JSON.parse(fs.readFileSync(path.join(REPO_ROOT, 'package.json'), 'utf8')) as { version: string }).version;
const SELF_SIGNED_CA_DIR = path.join('var', 'lib', 'meshd', 'ca');

type Obj = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

describe('meshctl proxy-status, internal-debug and version through the orchestrator API (end to end)', function () {
  this.timeout(240_000);
  let server: OrchApiServer;
  let tmp: string;
  let kubeconfig: string;
  let configDir: string;
  const daemons: RunningDaemon[] = [];
  const agents: RunningAgent[] = [];
  let httpbin: RunningAgent;

  const meshctl = (...args: string[]) => runCli('meshctl', [...args, '--orchconfig', kubeconfig], { env: { TZ: 'UTC' }, timeoutMs: 60_000 });
  const ok = async (...args: string[]) => {
    const r = await meshctl(...args);
    expect(r.stderr, 'stderr').to.equal('');
    expect(r.code, 'exit code').to.equal(0);
    return r.stdout;
  };
  const failing = async (...args: string[]) => {
    const r = await meshctl(...args);
    expect(r.code, `exit code; stdout ${r.stdout}`).to.equal(1);
    const lines = r.stderr.trimEnd().split('\n');
    expect(lines, r.stderr).to.have.length(1);
    return lines[0];
  };
  const rowsOf = (table: string) => table.trimEnd().split('\n').map((line) => line.split(/ {2,}/));
  const saToken = async (namespace: string) => {
    const answer = await server.kubeConfig().makeApiClient(k8s.CoreV1Api).createNamespacedServiceAccountToken({ name: 'default', namespace, body: { spec: { audiences: ['mesh-ca'] } } });
    return answer.status!.token;
  };

  before(async () => {
    server = await startOrchApiServer({ bookmarkIntervalMs: 500 });
    tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'mesh-xds-e2e-'));
    kubeconfig = server.writeKubeconfigFile(tmp);
    for (const name of ['mesh-system', 'foo', 'bar']) await server.create({ apiVersion: 'v1', kind: 'Namespace', metadata: { name } });
    configDir = path.join(tmp, 'config');
    fs.cpSync(path.join(REPO_ROOT, 'samples', 'config'), configDir, { recursive: true });
    // Two built-in proxies on one host without traffic capture: bar's outbound listeners bind its own address.
    fs.writeFileSync(
      path.join(configDir, 'sidecar-bar.yaml'),
      'apiVersion: networking.mesh.io/v1\nkind: Sidecar\nmetadata: { name: default, namespace: bar }\nspec: { egress: [{ bind: 127.0.0.72, hosts: ["*/*"] }] }\n',
    );
    // The daemons check tokens with the API server's signing keys, as they would on a cluster.
    const env = { JWT_RULE: await orchTokenJwtRule(server), PILOT_DEBOUNCE_AFTER: '10ms', PILOT_DEBOUNCE_MAX: '100ms' };
    const a = await startDaemon(['--configDir', configDir], { ...env, POD_NAME: 'meshd-a' });
    daemons.push(a);
    // Replicas share the mesh's CA: the second starts with the first's persisted root.
    const workDir = fs.mkdtempSync(path.join(os.tmpdir(), 'mesh-daemon-'));
    fs.cpSync(path.join(a.workDir, SELF_SIGNED_CA_DIR), path.join(workDir, SELF_SIGNED_CA_DIR), { recursive: true });
    const b = await startDaemon(['--configDir', configDir], { ...env, POD_NAME: 'meshd-b' }, { workDir });
    daemons.push(b);
    expect(b.rootCertPem()).to.equal(a.rootCertPem());
    for (const [name, d] of [['meshd-a', a], ['meshd-b', b]] as const) {
      await runPod(server, { name, namespace: 'mesh-system', labels: { app: 'meshd', 'mesh.io/rev': 'default' }, ports: { 15012: d.secureGrpcPort } });
    }
    // The mesh roots, published where the daemons publish them on a cluster.
    await server.create({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'mesh-ca-root-cert', namespace: 'mesh-system' }, data: { 'root-cert.pem': a.rootCertPem() } });

    // httpbin-1 in foo talks mutual TLS to meshd-a with its orchestrator token; ratings-1 in bar plain text to meshd-b.
    const rootPath = path.join(tmp, 'root-cert.pem');
    fs.writeFileSync(rootPath, a.rootCertPem());
    httpbin = await startAgent({
      grpcPort: a.grpcPort,
      instanceIp: '127.0.0.71',
      namespace: 'foo',
      labels: { app: 'httpbin' },
      env: { POD_NAME: 'httpbin-1' },
      secure: { secureGrpcPort: a.secureGrpcPort, rootCertPath: rootPath, token: await saToken('foo') },
    });
    agents.push(httpbin);
    const ratings = await startAgent({ grpcPort: b.grpcPort, instanceIp: '127.0.0.72', namespace: 'bar', labels: { app: 'ratings' }, env: { POD_NAME: 'ratings-1' } });
    agents.push(ratings);
    for (const agent of agents) await agent.waitForLog(/built-in proxy ready/, 20_000);
    await runPod(server, { name: 'httpbin-1', namespace: 'foo', labels: { app: 'httpbin' }, ports: { 15000: httpbin.adminPort } });
    await runPod(server, { name: 'ratings-1', namespace: 'bar', deployment: 'ratings', labels: { app: 'ratings' }, ports: { 15000: ratings.adminPort } });
  });

  after(async () => {
    for (const agent of agents) await agent.stop();
    for (const d of daemons) await d.stop();
    await server?.stop();
    if (tmp) fs.rmSync(tmp, { recursive: true, force: true });
  });

  it('lists every proxy of both replicas as SYNCED, asking each daemon pod with a token', async () => {
    const deadline = Date.now() + 20_000;
    let rows: string[][];
    for (;;) {
      rows = rowsOf(await ok('proxy-status', '--verbosity', '1'));
      if (rows.length === 3 && rows.slice(1).every((r) => r.slice(2, 4).every((s) => s === 'SYNCED'))) break;
      if (Date.now() > deadline) throw new Error(`not every proxy is synced: ${JSON.stringify(rows)}`);
      await new Promise((r) => setTimeout(r, 200));
    }
    expect(rows[0]).to.deep.equal(['NAME', 'CLUSTER', 'CDS', 'LDS', 'EDS', 'RDS', 'ECDS', 'MESHD', 'VERSION']);
    expect(rows.slice(1).map((r) => [r[0], r[r.length - 2], r[r.length - 1]])).to.deep.equal([
      ['sidecar~127.0.0.71~httpbin-1.foo~foo.svc.cluster.local', 'meshd-a', VERSION],
      ['sidecar~127.0.0.72~ratings-1.bar~bar.svc.cluster.local', 'meshd-b', VERSION],
    ]);
    // The token came from the TokenRequest API, for mesh-system's default service account.
    const tokenRequests = server.requests.log.filter((r) => r.resource === 'serviceaccounts/token' && r.verb === 'create');
    expect(tokenRequests.length).to.be.greaterThan(0);
    expect(tokenRequests[tokenRequests.length - 1].path).to.equal('/api/v1/namespaces/mesh-system/serviceaccounts/default/token');
    expect((tokenRequests[tokenRequests.length - 1].body as Obj).spec.audiences).to.deep.equal(['mesh-ca']);
    // -o json with two replicas: each answer under its instance.
    const json = JSON.parse(await ok('proxy-status', '-o', 'json')) as Record<string, Obj>;
    expect(Object.keys(json).sort()).to.deep.equal(['meshd-a', 'meshd-b']);
  });

  it('compares each proxy with what its daemon would send, reading the proxy through a port-forward', async () => {
    expect(await ok('proxy-status', 'httpbin-1.foo')).to.equal('Clusters Match\nListeners Match\nRoutes Match\n');
    // A deployment names its pod; its proxy is on the other replica, which the first passes on.
    expect(await ok('experimental', 'proxy-status', 'deployment/ratings', '-n', 'bar')).to.equal('Clusters Match\nListeners Match\nRoutes Match\n');
  });

  it('shows what differs once the daemon would send something else than the proxy has', async () => {
    // The proxy's dump as it is now, then a config change the daemon pushes.
    const before = path.join(tmp, 'httpbin-before.json');
    fs.writeFileSync(before, (await httpGet(httpbin.adminPort, '/config_dump')).body);
    fs.writeFileSync(
      path.join(configDir, 'extra.yaml'),
      `apiVersion: networking.mesh.io/v1
kind: ServiceEntry
metadata: { name: extra, namespace: foo }
spec:
  hosts: [extra.example.com]
  location: MESH_EXTERNAL
  resolution: DNS
  ports: [{ number: 4433, name: tcp, protocol: TCP }]
`,
    );
    const deadline = Date.now() + 20_000;
    let out: string;
    for (;;) {
      out = await ok('proxy-status', 'httpbin-1.foo', '--file', before);
      if (out.includes('extra.example.com')) break;
      if (Date.now() > deadline) throw new Error(`the daemon did not take the new config: ${out.slice(0, 300)}`);
      await new Promise((r) => setTimeout(r, 200));
    }
    const lines = out.split('\n');
    expect(lines.slice(0, 2)).to.deep.equal(['--- Meshd Clusters', '+++ Proxy Clusters']);
    expect(lines.filter((l) => l.startsWith('-') && l.includes('"name": "outbound|4433||extra.example.com"'))).to.have.length(1);
    expect(out).to.contain('--- Meshd Listeners\n+++ Proxy Listeners\n');
    // The live proxy has it by now.
    expect(await ok('proxy-status', 'httpbin-1.foo')).to.equal('Clusters Match\nListeners Match\nRoutes Match\n');
  });

  it('gives internal-debug answers from one replica, or from each with --all', async () => {
    const all = JSON.parse(await ok('experimental', 'internal-debug', 'version', '--all')) as Record<string, Obj>;
    expect(Object.keys(all).sort()).to.deep.equal(['meshd-a', 'meshd-b']);
    expect(all['meshd-b']).to.deep.include({ Component: 'meshd', ID: 'meshd-b' });
    const syncz = JSON.parse(await ok('x', 'internal-debug', 'syncz', '--all')) as Record<string, Array<{ proxy: string }>>;
    expect(syncz['meshd-a'].map((s) => s.proxy)).to.deep.equal(['sidecar~127.0.0.71~httpbin-1.foo~foo.svc.cluster.local']);
    expect(syncz['meshd-b'].map((s) => s.proxy)).to.deep.equal(['sidecar~127.0.0.72~ratings-1.bar~bar.svc.cluster.local']);
    // Without --all the first replica that has the answer gives it: the proxy is on meshd-b.
    const dump = JSON.parse(await ok('x', 'internal-debug', 'config_dump?proxyID=ratings-1.bar')) as Obj;
    expect(dump.configs[0]['@type']).to.equal('type.googleapis.com/envoy.admin.v3.ClustersConfigDump');
  });

  it('prints the control plane and data plane versions with version', async () => {
    expect(await ok('version')).to.equal(`client version: ${VERSION}\ncontrol plane version: ${VERSION}\ndata plane version: ${VERSION} (2 proxies)\n`);
    const json = JSON.parse(await ok('version', '-o', 'json', '--revision', 'default')) as Obj;
    expect(json.meshVersion.map((s: Obj) => [s.Component, s.Revision, s.Info.version])).to.deep.equal([
      ['meshd', 'default', VERSION],
      ['meshd', 'default', VERSION],
    ]);
  });

  it('says which daemons it looked for when none match the label or revision', async () => {
    expect(await failing('proxy-status', '--revision', 'canary')).to.equal('Error: no running daemon pods in namespace "mesh-system" match app=meshd,mesh.io/rev=canary');
    expect(await failing('x', 'internal-debug', 'syncz', '--xds-label', 'app=nothing')).to.equal('Error: no running daemon pods in namespace "mesh-system" match app=nothing');
  });

  it('verifies the daemon against the published roots: a wrong --authority fails, --insecure skips the check', async () => {
    const line = await failing('proxy-status', '--authority', 'wrong.example.com');
    expect(line).to.match(/^Error: cannot reach daemon pod meshd-a\.mesh-system: .*wrong\.example\.com/);
    expect(rowsOf(await ok('proxy-status', '--authority', 'wrong.example.com', '--insecure'))).to.have.length(3);
  });

  it("refuses a token of another namespace the system namespace's debug types", async () => {
    // -i foo: foo's default service account; its identity may ask no syncz.
    const a = daemons[0];
    const line = await failing('proxy-status', '-i', 'foo', '--xds-address', `127.0.0.1:${a.secureGrpcPort}`, '--authority', 'meshd.mesh-system.svc');
    expect(line).to.equal(
      'Error: 127.0.0.1:' +
        `${a.secureGrpcPort} refused the request (PERMISSION_DENIED): identity spiffe://cluster.local/ns/foo/sa/default may not ask for syncz: only identities of namespace mesh-system may (DEBUG_ENDPOINT_AUTH_ALLOWED_NAMESPACES adds namespaces); others may ask config_dump of proxies in their own namespace`,
    );
  });

  it('uses a client certificate with --cert-dir, without the orchestrator API', async () => {
    // httpbin-1's workload certificate (identity foo/default): foo's proxies only.
    const certDir = path.join(httpbin.workDir, 'certs');
    const a = daemons[0];
    const bare = ['--xds-address', `127.0.0.1:${a.secureGrpcPort}`, '--cert-dir', certDir, '--authority', 'meshd.mesh-system.svc'];
    const dump = path.join(tmp, 'httpbin-now.json');
    fs.writeFileSync(dump, (await httpGet(httpbin.adminPort, '/config_dump')).body);
    const noOrchestrator = { env: { TZ: 'UTC', HOME: tmp }, timeoutMs: 60_000 };
    const own = await runCli('meshctl', ['proxy-status', 'httpbin-1.foo', '--file', dump, ...bare], noOrchestrator);
    expect(own.stderr).to.equal('');
    expect(own.stdout).to.equal('Clusters Match\nListeners Match\nRoutes Match\n');
    const syncz = await runCli('meshctl', ['proxy-status', ...bare], noOrchestrator);
    expect(syncz.code).to.equal(1);
    expect(syncz.stderr).to.contain('(PERMISSION_DENIED): identity spiffe://cluster.local/ns/foo/sa/default may not ask for syncz');
    const missing = await runCli('meshctl', ['proxy-status', '--xds-address', '127.0.0.1:1', '--cert-dir', path.join(tmp, 'nowhere')], noOrchestrator);
    expect(missing.stderr).to.equal(`Error: --cert-dir: cannot read ${path.join(tmp, 'nowhere', 'cert-chain.pem')}: ENOENT\n`);
  });
});
