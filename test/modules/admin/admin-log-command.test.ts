import { expect } from 'chai';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { parse } from 'yaml';
import { sidecarNode, SotwClient } from '../../helpers/ads-client';
import { RunningDaemon, startDaemon } from '../../helpers/daemon';
import { OrchApiServer, startOrchApiServer } from '../../helpers/orch-api';
import { runPod } from '../../helpers/orch-mesh';
import { REPO_ROOT, runCli } from '../../helpers/run-cli';
import { json } from '../ctrlz/http-client';

/*
 * `meshctl admin log` as an operator runs it: meshctl → the in-process API server → the pod's
 * port-forward → the ControlZ port of a real daemon registered as a pod of the mesh namespace.
 */

const SAMPLES = path.join(REPO_ROOT, 'samples', 'config');
const CDS = 'type.googleapis.com/envoy.config.cluster.v3.Cluster';

interface ScopeInfo {
  name: string;
  output_level: string;
  stack_trace_level: string;
}

describe('meshctl admin log (through the orchestrator API and port-forward)', function () {
  this.timeout(90_000);
  let server: OrchApiServer;
  let dir: string;
  let kubeconfig: string;
  let main: RunningDaemon;
  let canary: RunningDaemon;

  const meshctl = (...args: string[]) => runCli('meshctl', [...args, '--orchconfig', kubeconfig], { timeoutMs: 30_000 });
  const scope = async (daemon: RunningDaemon, name: string) => (await json<ScopeInfo>(daemon.ctrlzPort, 'GET', `/scopej/${name}`)).value;
  const reset = async (daemon: RunningDaemon) => {
    const all = (await json<ScopeInfo[]>(daemon.ctrlzPort, 'GET', '/scopej/')).value;
    for (const s of all) await json(daemon.ctrlzPort, 'PUT', `/scopej/${s.name}`, { output_level: 'info', stack_trace_level: 'none' });
  };

  before(async () => {
    server = await startOrchApiServer({ simulateCluster: false });
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'mesh-admin-log-'));
    kubeconfig = server.writeKubeconfigFile(dir);
    [main, canary] = await Promise.all([startDaemon(['--configDir', SAMPLES]), startDaemon(['--configDir', SAMPLES])]);
    await runPod(server, { name: 'meshd-7d4b9c-x2k8p', namespace: 'mesh-system', labels: { app: 'meshd' }, ports: { 9876: main.ctrlzPort } });
    await runPod(server, { name: 'meshd-canary-5f6d7-q9z3w', namespace: 'mesh-system', labels: { app: 'meshd', 'mesh.io/rev': 'canary' }, ports: { 9876: canary.ctrlzPort } });
  });
  afterEach(async () => {
    await Promise.all([reset(main), reset(canary)]);
  });
  after(async () => {
    await Promise.all([main?.stop(), canary?.stop()]);
    await server?.stop();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it('shows a named daemon\'s scopes as the incumbent\'s table', async () => {
    const r = await meshctl('admin', 'log', 'meshd-7d4b9c-x2k8p');
    expect(r.stderr).to.equal('');
    expect(r.code).to.equal(0);
    const lines = r.stdout.trimEnd().split('\n');
    expect(lines[0]).to.match(/^ACTIVE SCOPE {3,}DESCRIPTION {3,}LOG LEVEL {3}STACK TRACE LEVEL$/);
    const ads = lines.find((l) => l.startsWith('ads '))!;
    expect(ads).to.match(/^ads {3,}xDS streams of connected proxies: requests, pushes, acknowledgements {3,}info {8}none$/);
    // Sorted by scope, every row as wide as the header's columns.
    const names = lines.slice(1).map((l) => l.split(' ')[0]);
    expect(names).to.deep.equal([...names].sort()).and.to.include.members(['ads', 'default', 'wle']);
    const col = lines[0].indexOf('LOG LEVEL');
    for (const l of lines.slice(1)) expect(l.slice(col, col + 4), l).to.equal('info');
  });

  it('--level ads:debug changes the daemon\'s logging: the daemon logs its pushes from then on', async () => {
    const r = await meshctl('admin', 'log', 'meshd-7d4b9c-x2k8p', '--level', 'ads:debug');
    expect(r.code, r.stderr).to.equal(0);
    expect(r.stdout).to.match(/^ACTIVE SCOPE .*\nads {3,}\S.* {3,}debug {7}none\n$/);
    expect(await scope(main, 'ads')).to.include({ output_level: 'debug' });
    expect(await scope(canary, 'ads'), 'a named pod: the other daemon is left alone').to.include({ output_level: 'info' });
    // Proof from the daemon's own output: a proxy connecting now is logged at debug.
    const mark = main.output().length;
    const client = new SotwClient(main.grpcPort, sidecarNode('10.1.0.7', 'default'));
    try {
      client.send({ type_url: CDS });
      await client.next(CDS);
    } finally {
      client.close();
    }
    await main.waitForLog(/\tdebug\tads\tCDS: PUSH node:sidecar~10\.1\.0\.7~/, 5000, mark);
    expect(main.output()).to.contain('ControlZ: scope ads set to output debug');
  });

  it('without a pod name, every daemon the selector picks, each under its name; -r narrows to a revision', async () => {
    const all = await meshctl('admin', 'log', '--level', 'model:warn', '--stack-trace-level', 'model:error');
    expect(all.code, all.stderr).to.equal(0);
    expect(all.stdout).to.match(/^meshd-7d4b9c-x2k8p\.mesh-system:\nACTIVE SCOPE .*\nmodel {3,}.* {3,}warn {8}error\n\nmeshd-canary-5f6d7-q9z3w\.mesh-system:\nACTIVE SCOPE /);
    for (const d of [main, canary]) expect(await scope(d, 'model')).to.include({ output_level: 'warn', stack_trace_level: 'error' });

    const rev = await meshctl('admin', 'log', '-r', 'canary', '-o', 'json');
    expect(rev.code, rev.stderr).to.equal(0);
    const rows = JSON.parse(rev.stdout) as Array<{ scope_name: string; log_level: string; stack_trace_level: string; description: string }>;
    expect(rows.find((s) => s.scope_name === 'model')).to.deep.include({ log_level: 'warn', stack_trace_level: 'error' });
    const none = await meshctl('admin', 'log', '-r', 'nosuch');
    expect(none.code).to.equal(1);
    expect(none.stderr).to.equal('Error: no running daemon pods match "app=meshd,mesh.io/rev=nosuch" in namespace mesh-system\n');
  });

  it('a bare level sets every scope (alias `meshd l`); --reset puts every scope back to info without stack traces', async () => {
    const bare = await runCli('meshctl', ['meshd', 'l', 'meshd-canary-5f6d7-q9z3w', '--level', 'debug', '-o', 'yaml', '--orchconfig', kubeconfig]);
    expect(bare.code, bare.stderr).to.equal(0);
    const rows = parse(bare.stdout) as Array<{ scope_name: string; log_level: string }>;
    expect(rows.length).to.be.greaterThan(30);
    expect(new Set(rows.map((r) => r.log_level))).to.deep.equal(new Set(['debug']));
    expect(await scope(canary, 'wle')).to.include({ output_level: 'debug' });
    expect(await scope(main, 'wle')).to.include({ output_level: 'info' });

    await json(canary.ctrlzPort, 'PUT', '/scopej/ca', { stack_trace_level: 'warn' });
    const reset = await meshctl('admin', 'log', 'meshd-canary-5f6d7-q9z3w', '--reset', '-o', 'json');
    expect(reset.code, reset.stderr).to.equal(0);
    for (const s of (await json<ScopeInfo[]>(canary.ctrlzPort, 'GET', '/scopej/')).value) expect(s, s.name).to.include({ output_level: 'info', stack_trace_level: 'none' });
  });

  it('an unknown scope or level is one clear line, exit 1, and nothing changes on any daemon', async () => {
    const unknown = await meshctl('admin', 'log', '--level', 'ads:debug,nosuch:info');
    expect(unknown.code).to.equal(1);
    expect(unknown.stdout).to.equal('');
    expect(unknown.stderr).to.match(/^Error: --level: unknown scope "nosuch" on pod meshd-7d4b9c-x2k8p\.mesh-system; its scopes are ads, adsc, .*\n$/);
    for (const d of [main, canary]) expect(await scope(d, 'ads')).to.include({ output_level: 'info' });

    const level = await meshctl('admin', 'log', '--level', 'ads:loud');
    expect(level.code).to.equal(1);
    expect(level.stderr).to.equal('Error: --level: invalid level "loud" in "ads:loud"; levels are none, error, warn, info, debug\n');
    const stack = await meshctl('admin', 'log', '--stack-trace-level', 'ads:fatal');
    expect(stack.stderr).to.match(/^Error: --stack-trace-level: invalid level "fatal"/);
    const both = await meshctl('admin', 'log', '--reset', '--level', 'ads:debug');
    expect(both.code).to.equal(1);
    expect(both.stderr).to.equal('Error: --reset cannot be combined with --level or --stack-trace-level\n');
    const output = await meshctl('admin', 'log', '-o', 'table');
    expect(output.code).to.not.equal(0);
    expect(output.stderr).to.match(/table/);
  });

  it('errors name the pod, the namespace and the port', async () => {
    const missing = await meshctl('admin', 'log', 'meshd-gone');
    expect(missing.code).to.equal(1);
    expect(missing.stderr).to.equal('Error: pod meshd-gone not found in namespace mesh-system\n');
    const port = await meshctl('admin', 'log', 'meshd-7d4b9c-x2k8p', '--ctrlz_port', '9877');
    expect(port.code).to.equal(1);
    expect(port.stderr).to.match(/^Error: cannot reach the introspection facility \(ControlZ\) of pod meshd-7d4b9c-x2k8p\.mesh-system port 9877: .*9877/);
    const selector = await meshctl('admin', 'log', '-l', 'app=nothing');
    expect(selector.stderr).to.equal('Error: no running daemon pods match "app=nothing" in namespace mesh-system\n');
    const elsewhere = await meshctl('admin', 'log', '-i', 'other-mesh');
    expect(elsewhere.stderr).to.equal('Error: no running daemon pods match "app=meshd" in namespace other-mesh\n');
  });
});
