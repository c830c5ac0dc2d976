import { expect } from 'chai';
import * as fs from 'node:fs';
import * as net from 'node:net';
import * as os from 'node:os';
import * as path from 'node:path';
import { RunningDaemon, startDaemon } from '../../helpers/daemon';
import { OrchApiServer, startOrchApiServer } from '../../helpers/orch-api';
import { runPod } from '../../helpers/orch-mesh';
import { RunningProgram, startProgram } from '../../helpers/program';
import { REPO_ROOT, runCli } from '../../helpers/run-cli';
import { request } from '../ctrlz/http-client';

/*
 * `meshctl dashboard controlz` as an operator runs it: a local listener whose connections go
 * through the in-process API server's port-forward to the ControlZ port of a real daemon
 * registered as a pod, until Ctrl-C.
 */

const SAMPLES = path.join(REPO_ROOT, 'samples', 'config');
const URL_LINE = /^http:\/\/(localhost|127\.0\.0\.1):(\d+)$/m;

async function portOf(program: RunningProgram): Promise<number> {
  const line = await program.waitForLog(URL_LINE, 20_000);
  return Number(URL_LINE.exec(line)![2]);
}

function closed(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = net.connect(port, '127.0.0.1');
    socket.once('connect', () => {
      socket.destroy();
      resolve(false);
    });
    socket.once('error', () => resolve(true));
  });
}

describe('meshctl dashboard controlz (through the orchestrator API and port-forward)', function () {
  this.timeout(90_000);
  let server: OrchApiServer;
  let dir: string;
  let kubeconfig: string;
  let daemon: RunningDaemon;
  const running: RunningProgram[] = [];

  const dashboard = (args: string[], env: Record<string, string> = {}) => {
    const program = startProgram('meshctl', ['dashboard', 'controlz', ...args, '--orchconfig', kubeconfig], env);
    running.push(program);
    return program;
  };

  before(async () => {
    server = await startOrchApiServer({ simulateCluster: false });
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'mesh-dash-controlz-'));
    kubeconfig = server.writeKubeconfigFile(dir);
    daemon = await startDaemon(['--configDir', SAMPLES]);
    await runPod(server, { name: 'meshd-6b8f9d-h4j2k', namespace: 'mesh-system', labels: { app: 'meshd' }, ports: { 9876: daemon.ctrlzPort } });
  });
  afterEach(async () => {
    for (const p of running.splice(0)) await p.stop('SIGKILL');
  });
  after(async () => {
    await daemon?.stop();
    await server?.stop();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it('--browser=false prints a URL serving the daemon\'s ControlZ pages; SIGINT ends it with exit 0', async () => {
    const program = dashboard(['--browser=false']);
    const port = await portOf(program);
    const home = await request(port, 'GET', '/');
    expect(home.status).to.equal(200);
    expect(home.text).to.contain('ControlZ').and.contain('href="/scopez/"');
    const scopes = JSON.parse((await request(port, 'GET', '/scopej/ads')).text) as { name: string };
    expect(scopes.name).to.equal('ads');
    // The URL, and that no browser is opened.
    expect(program.output().trim()).to.match(/^http:\/\/localhost:\d+\nskipping opening a browser$/);

    expect(await program.stop('SIGINT')).to.equal(0);
    expect(await closed(port), 'the local port is closed').to.equal(true);
    await new Promise((r) => setTimeout(r, 200));
    expect(server.portForward.active, 'no forward left open on the API server').to.equal(0);
  });

  it('names the pod, listens where --address and --port say, and ends on SIGTERM too', async () => {
    const holder = net.createServer();
    await new Promise<void>((r) => holder.listen(0, '127.0.0.1', r));
    const free = (holder.address() as net.AddressInfo).port;
    await new Promise((r) => holder.close(r));
    const program = dashboard(['meshd-6b8f9d-h4j2k.mesh-system', '--address', '127.0.0.1', '-p', String(free), '--browser=false']);
    const line = await program.waitForLog(URL_LINE, 20_000);
    expect(line).to.equal(`http://127.0.0.1:${free}`);
    expect((await request(free, 'GET', '/versionz/')).text).to.contain('Version Info');
    expect(await program.stop('SIGTERM')).to.equal(0);
  });

  it('opens the browser through xdg-open, or says none was found and keeps serving', async () => {
    // A stand-in browser opener: records the URL it was asked to open.
    const bin = fs.mkdtempSync(path.join(os.tmpdir(), 'mesh-opener-'));
    const opened = path.join(bin, 'opened.txt');
    fs.writeFileSync(path.join(bin, 'xdg-open'), `#!/bin/sh\necho "$1" > ${opened}\n`, { mode: 0o755 });
    try {
      const withOpener = dashboard([], { PATH: `${bin}:${process.env.PATH ?? ''}` });
      const port = await portOf(withOpener);
      const deadline = Date.now() + 10_000;
      while (!fs.existsSync(opened) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
      expect(fs.readFileSync(opened, 'utf8').trim()).to.equal(`http://localhost:${port}`);
      expect(await withOpener.stop('SIGINT')).to.equal(0);

      const none = dashboard([], { PATH: bin.replace(/$/, '-nothing-here') });
      const port2 = await portOf(none);
      await none.waitForLog(/no browser opener \(xdg-open\) was found; open http:\/\/localhost:\d+ in your browser/);
      expect((await request(port2, 'GET', '/')).status).to.equal(200);
      expect(await none.stop('SIGINT')).to.equal(0);
    } finally {
      fs.rmSync(bin, { recursive: true, force: true });
    }
  });

  it('refuses a pod name with a selector, and says when no pod matches', async () => {
    const both = await runCli('meshctl', ['dashboard', 'controlz', 'meshd-6b8f9d-h4j2k', '-l', 'app=meshd', '--browser=false', '--orchconfig', kubeconfig]);
    expect(both.code).to.equal(1);
    expect(both.stderr).to.equal('Error: name cannot be provided when a selector is specified\n');
    const none = await runCli('meshctl', ['d', 'controlz', '-l', 'app=nothing', '--browser=false', '--orchconfig', kubeconfig]);
    expect(none.code).to.equal(1);
    expect(none.stderr).to.equal('Error: no pods found: no running pod matches app=nothing in namespace mesh-system\n');
    const missing = await runCli('meshctl', ['dash', 'controlz', 'meshd-gone', '--browser=false', '--orchconfig', kubeconfig]);
    expect(missing.stderr).to.equal('Error: pod meshd-gone not found in namespace mesh-system\n');
  });
});
