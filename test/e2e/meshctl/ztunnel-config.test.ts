import { expect } from 'chai';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { OrchApiServer, startOrchApiServer } from '../../helpers/orch-api';
import { runPod } from '../../helpers/orch-mesh';
import { REPO_ROOT, runCli } from '../../helpers/run-cli';
import { startZtunnelAdmin, ZtunnelAdmin } from '../../helpers/ztunnel-admin';

/**
 * `meshctl ztunnel-config` against running ztunnels, as on a cluster: meshctl → in-process
 * orchestrator API → pods/portforward → a local server playing each ztunnel's admin port
 * (config dump and a stateful /logging). Three ztunnel pods in mesh-system (label
 * app=ztunnel): node-a's serves the fixture dump, node-b's a smaller one, node-c's is broken;
 * a `web` pod in default is not a ztunnel.
 */

const FIXTURES = path.join(REPO_ROOT, 'test', 'fixtures', 'ztunnel-config');
const expected = (name: string) => fs.readFileSync(path.join(FIXTURES, name), 'utf8');
const fixture = JSON.parse(fs.readFileSync(path.join(FIXTURES, 'dump.json'), 'utf8'));
/** node-b's ztunnel: one certificate identity (still initializing) and no open connections. */
const nodeBDump = { ...fixture, certificates: [fixture.certificates[2]], workloadState: {} };

describe('meshctl ztunnel-config through port-forward to running ztunnels', function () {
  this.timeout(180_000);
  let server: OrchApiServer;
  let dir: string;
  let kubeconfig: string;
  let adminA: ZtunnelAdmin;
  let adminB: ZtunnelAdmin;
  let adminBroken: ZtunnelAdmin;

  before(async () => {
    server = await startOrchApiServer({ simulateCluster: false });
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'ztunnel-e2e-'));
    kubeconfig = server.writeKubeconfigFile(dir);
    adminA = await startZtunnelAdmin({ dump: fixture });
    adminB = await startZtunnelAdmin({ dump: nodeBDump });
    adminBroken = await startZtunnelAdmin({ dump: {}, broken: { status: 503, body: 'upstream connect error\nsecond line' } });
    const ztunnel = { namespace: 'mesh-system', labels: { app: 'ztunnel' } };
    await runPod(server, { ...ztunnel, name: 'ztunnel-4kq8z', nodeName: 'node-a', ports: { 15000: adminA.port, 16000: adminA.port } });
    await runPod(server, { ...ztunnel, name: 'ztunnel-9xw2r', nodeName: 'node-b', ports: { 15000: adminB.port } });
    await runPod(server, { ...ztunnel, name: 'ztunnel-zz9qt', nodeName: 'node-c', ports: { 15000: adminBroken.port } });
    await runPod(server, { name: 'web', namespace: 'default', labels: { app: 'web' }, ports: { 15000: adminA.port } });
  });

  after(async () => {
    await Promise.all([adminA, adminB, adminBroken].map((a) => a?.close()));
    await server?.stop();
    if (dir) fs.rmSync(dir, { recursive: true, force: true });
  });

  const meshctl = (...args: string[]) => runCli('meshctl', ['ztunnel-config', ...args, '--orchconfig', kubeconfig], { timeoutMs: 60_000 });
  async function ok(...args: string[]): Promise<string> {
    const r = await meshctl(...args);
    expect(r.stderr, `stderr of ${args.join(' ')}`).to.equal('');
    expect(r.code, `exit code of ${args.join(' ')}`).to.equal(0);
    return r.stdout;
  }
  async function failure(...args: string[]): Promise<{ stdout: string; error: string }> {
    const r = await meshctl(...args);
    expect(r.code, `exit code of ${args.join(' ')}: ${r.stderr}`).to.equal(1);
    const lines = r.stderr.trimEnd().split('\n');
    expect(lines, r.stderr).to.have.length(1);
    return { stdout: r.stdout, error: lines[0] };
  }

  describe('config dump', () => {
    it('workload without a pod asks the first ztunnel of the DaemonSet', async () => {
      expect(await ok('workload')).to.equal(expected('workloads.txt'));
      expect(adminA.requests).to.include('GET /config_dump');
    });

    it('connections and certificates differ per ztunnel: without a pod or --node, several ztunnels are refused', async () => {
      const { error } = await failure('connections');
      expect(error).to.equal('Error: ztunnel pod name or --node must be set: 3 ztunnel pods run in namespace mesh-system (label app=ztunnel), and this differs between them');
      expect((await failure('certificate')).error).to.match(/^Error: ztunnel pod name or --node must be set/);
    });

    it('a pod argument: name (looked up in the mesh namespace), name.namespace, pod/name.namespace', async () => {
      expect(await ok('connections', 'ztunnel-4kq8z')).to.equal(expected('connections.txt'));
      expect(JSON.parse(await ok('connections', 'ztunnel-9xw2r.mesh-system', '-o', 'json'))).to.deep.equal([]);
      expect(JSON.parse(await ok('all', 'pod/ztunnel-4kq8z.mesh-system', '-o', 'json'))).to.deep.equal(fixture);
    });

    it('--node picks the ztunnel on that node', async () => {
      expect(await ok('certs', '--node', 'node-b')).to.equal(
        'CERTIFICATE NAME                               TYPE     STATUS           VALID CERT     SERIAL NUMBER     NOT AFTER     NOT BEFORE\n' +
          'spiffe://cluster.local/ns/checkout/sa/cart     NA       Initializing     false          NA                NA            NA\n',
      );
      expect(await ok('all', '--node', 'node-a')).to.equal(expected('all.txt'));
    });

    it('filters apply to the live dump as to a file', async () => {
      expect(await ok('svc', 'ztunnel-4kq8z', '--service-namespace', 'checkout')).to.equal(expected('services-checkout.txt'));
      expect(await ok('pol', '--node', 'node-a', '--policy-namespace', 'bookstore')).to.equal(expected('policies-bookstore.txt'));
      expect(await ok('cons', 'ztunnel-4kq8z', '--raw', '--direction', 'outbound')).to.equal(expected('connections-raw-outbound.txt'));
    });

    it('--proxy-admin-port reaches another port of the pod', async () => {
      const before = adminA.requests.length;
      expect(await ok('w', 'ztunnel-4kq8z', '--proxy-admin-port', '16000', '--workload-namespace', 'bookstore', '--workload-node', 'node-a')).to.equal(expected('workloads-bookstore-node-a.txt'));
      expect(adminA.requests.length).to.equal(before + 1);
      const { error } = await failure('w', 'ztunnel-4kq8z', '--proxy-admin-port', '15999');
      expect(error).to.match(/^Error: .*15999.*ztunnel-4kq8z/);
    });

    it('errors name the pod: not a ztunnel, no ztunnel on the node, no such pod, a broken ztunnel', async () => {
      expect((await failure('workload', 'web.default')).error).to.equal('Error: pod web.default is not a ztunnel (no label app=ztunnel); ztunnel-config reads ztunnel pods only');
      expect((await failure('workload', '--node', 'node-x')).error).to.equal('Error: no running ztunnel pod on node node-x in namespace mesh-system (label app=ztunnel)');
      expect((await failure('workload', 'ztunnel-nope')).error).to.equal('Error: pod ztunnel-nope not found in namespace mesh-system');
      expect((await failure('workload', 'ztunnel-zz9qt')).error).to.equal(
        'Error: ztunnel ztunnel-zz9qt.mesh-system answered GET /config_dump on port 15000 with status 503: upstream connect error',
      );
      expect((await failure('workload', '--node', 'node-a', 'ztunnel-4kq8z')).error).to.equal('Error: at most one of --file, --node, or pod name must be passed');
    });

    it('another mesh namespace (-i) has no ztunnels', async () => {
      expect((await failure('workload', '-i', 'other-mesh')).error).to.equal('Error: no running ztunnel pod in namespace other-mesh (label app=ztunnel)');
    });
  });

  describe('log', () => {
    it('shows, sets and resets the level of one ztunnel through its /logging', async () => {
      expect(await ok('log', 'ztunnel-4kq8z')).to.equal('ztunnel-4kq8z.mesh-system:\ncurrent log level is hickory_server::server::server_future=off,info\n\n');
      expect(await ok('o', 'ztunnel-4kq8z', '--level', 'access:debug,warning')).to.equal(
        'ztunnel-4kq8z.mesh-system:\ncurrent log level is hickory_server::server::server_future=off,access=debug,warn\n\n',
      );
      expect(adminA.requests).to.include('POST /logging?level=access%3Ddebug%2Cwarn');
      // The level stays on the ztunnel: asked again, on the same pod through --node.
      expect(await ok('log', '--node', 'node-a')).to.equal('ztunnel-4kq8z.mesh-system:\ncurrent log level is hickory_server::server::server_future=off,access=debug,warn\n\n');
      expect(await ok('log', 'ztunnel-4kq8z', '-r')).to.equal('ztunnel-4kq8z.mesh-system:\ncurrent log level is hickory_server::server::server_future=off,warn\n\n');
      expect(adminA.filter()).to.equal('hickory_server::server::server_future=off,warn');
    });

    it('without a pod, every ztunnel: the working ones print, the broken one is the error', async () => {
      const { stdout, error } = await failure('log', '--level', 'ztunnel::proxy:trace');
      expect(stdout).to.equal(
        'ztunnel-4kq8z.mesh-system:\ncurrent log level is hickory_server::server::server_future=off,ztunnel::proxy=trace,warn\n\n' +
          'ztunnel-9xw2r.mesh-system:\ncurrent log level is hickory_server::server::server_future=off,ztunnel::proxy=trace,info\n\n',
      );
      expect(error).to.equal('Error: ztunnel ztunnel-zz9qt.mesh-system answered POST /logging?level=ztunnel%3A%3Aproxy%3Dtrace on port 15000 with status 503: upstream connect error');
      expect(adminB.filter()).to.equal('hickory_server::server::server_future=off,ztunnel::proxy=trace,info');
    });

    it('refuses bad levels, --level with --reset, -o json and --file before asking any ztunnel', async () => {
      const before = adminA.requests.length + adminB.requests.length;
      expect((await failure('log', 'ztunnel-4kq8z', '--level', 'loud')).error).to.equal('Error: --level: unrecognized logging level "loud" in "loud"; levels are trace, debug, info, warning, error, critical, off');
      expect((await failure('log', 'ztunnel-4kq8z', '--level', 'debug', '--reset')).error).to.equal('Error: --level cannot be combined with --reset');
      expect((await failure('log', 'ztunnel-4kq8z', '-o', 'json')).error).to.equal('Error: --output does not apply to ztunnel-config log');
      expect((await failure('log', '-f', path.join(FIXTURES, 'dump.json'))).error).to.equal('Error: --file does not apply to ztunnel-config log: log levels are read from and set on running ztunnels');
      expect(adminA.requests.length + adminB.requests.length).to.equal(before);
    });
  });
});
