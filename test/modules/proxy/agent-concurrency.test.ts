import { expect } from 'chai';
import * as fs from 'node:fs';
import * as http from 'node:http';
import type { AddressInfo } from 'node:net';
import * as os from 'node:os';
import * as path from 'node:path';
import { proxyWorkerCount } from '../../../src/modules/agent/agent';
import { RunningAgent, startAgent } from '../../helpers/agent';
import { RunningDaemon, startDaemon } from '../../helpers/daemon';
import { workloadServiceYaml } from '../../helpers/push';
import { usesSharedLoopbackNetwork } from '../../helpers/shared-network';

usesSharedLoopbackNetwork();

const IP = '127.0.0.46';
const PORT = 9086;
const HOST = 'shop.conc.svc.cluster.local';

/** The local TCP ports of the sockets process `pid` holds (Linux /proc), to tell which worker opened an upstream connection. */
function localPortsOf(pid: number): Set<number> {
  const inodes = new Set<string>();
  for (const fd of fs.readdirSync(`/proc/${pid}/fd`)) {
    try {
      const m = /^socket:\[(\d+)\]$/.exec(fs.readlinkSync(`/proc/${pid}/fd/${fd}`));
      if (m) inodes.add(m[1]);
    } catch {
      // closed meanwhile
    }
  }
  const ports = new Set<number>();
  for (const line of fs.readFileSync(`/proc/${pid}/net/tcp`, 'utf8').split('\n').slice(1)) {
    const f = line.trim().split(/\s+/);
    if (f.length > 9 && inodes.has(f[9])) ports.add(parseInt(f[1].split(':')[1], 16));
  }
  return ports;
}

/** One request on a connection of its own (the listener hands new connections to the workers in turn). */
function call(): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = http.get({ host: IP, port: PORT, path: '/', headers: { host: HOST }, agent: false, timeout: 5000 }, (res) => {
      let body = '';
      res.on('data', (d) => (body += d));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
    });
    req.on('error', reject);
    req.on('timeout', () => req.destroy(new Error('no answer within 5 s')));
  });
}

async function admin(port: number, method: string, pathAndQuery: string): Promise<{ status: number; body: string }> {
  const res = await fetch(`http://127.0.0.1:${port}${pathAndQuery}`, { method, signal: AbortSignal.timeout(5000) });
  return { status: res.status, body: await res.text() };
}

/** Repeats `check` until it holds (at most 15 s). */
async function eventually(what: string, check: () => Promise<boolean>): Promise<void> {
  const deadline = Date.now() + 15_000;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`${what}: not within 15 s`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

describe('how many built-in proxy workers --concurrency asks for', () => {
  it('takes the flag, else MESH_CPU_LIMIT rounded up, else one per core; refuses a negative count', () => {
    expect(proxyWorkerCount(3, 8)).to.equal(3);
    expect(proxyWorkerCount(0, 1.5)).to.equal(2);
    expect(proxyWorkerCount(0, 0)).to.equal(os.availableParallelism());
    expect(() => proxyWorkerCount(-1)).to.throw('--concurrency -1: must be 0 (one worker per core) or a positive number of workers');
  });
});

describe('pilot-agent proxy --concurrency 2 (built-in proxy workers)', function () {
  this.timeout(60_000);
  let dir: string;
  let daemon: RunningDaemon;
  let agent: RunningAgent;
  let pids: number[];
  /** The upstream answers with the client port of the connection, which tells the worker apart. */
  const app = http.createServer((req, res) => {
    req.resume();
    res.end(String(req.socket.remotePort));
  });

  before(async () => {
    await new Promise<void>((r) => app.listen(0, '127.0.0.1', r));
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'mesh-agent-conc-'));
    const appPort = (app.address() as AddressInfo).port;
    fs.writeFileSync(
      path.join(dir, 'shop.yaml'),
      workloadServiceYaml({ namespace: 'conc', name: 'shop', address: IP, ports: [`{ number: ${PORT}, name: http, protocol: HTTP, targetPort: ${appPort} }`], labels: { app: 'shop' } }),
    );
    daemon = await startDaemon(['--configDir', dir], { PILOT_DEBOUNCE_AFTER: '10ms' });
    agent = await startAgent({ grpcPort: daemon.grpcPort, instanceIp: IP, namespace: 'conc', labels: { app: 'shop' }, args: ['--concurrency', '2'] });
    const started = await agent.waitForLog(/built-in proxy workers started: pids (\d+), (\d+)/, 20_000);
    pids = /pids (\d+), (\d+)/.exec(started)!.slice(1).map(Number);
    await agent.waitForLog(/built-in proxy ready/, 20_000);
  });

  after(async () => {
    await agent?.stop();
    await daemon?.stop();
    await new Promise<void>((r) => app.close(() => r()));
    app.closeAllConnections();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it('serves one listener from both workers, with one xDS stream to the daemon', async () => {
    expect(agent.output()).to.contain('starting the built-in proxy (2 worker processes)');
    const answers = await Promise.all(Array.from({ length: 8 }, () => call()));
    expect(answers.map((a) => a.status)).to.deep.equal(Array(8).fill(200));
    const ports = answers.map((a) => Number(a.body));
    const served = pids.filter((pid) => {
      const own = localPortsOf(pid);
      return ports.some((p) => own.has(p));
    });
    expect(served, `upstream ports ${ports.join(', ')}`).to.deep.equal(pids);
    const syncz = (await (await fetch(`http://127.0.0.1:${daemon.httpPort}/debug/syncz`)).json()) as { proxy: string }[];
    expect(syncz.filter((c) => c.proxy.includes(IP)), JSON.stringify(syncz)).to.have.length(1);
  });

  it('answers on the admin port for all workers, and passes log levels on to them', async () => {
    expect((await admin(agent.adminPort, 'GET', '/ready')).body).to.equal('LIVE\n');
    const listeners = JSON.parse((await admin(agent.adminPort, 'GET', '/listeners')).body) as Record<string, string>;
    expect(Object.values(listeners)).to.include(`${IP}:${PORT}`);
    const dump = JSON.parse((await admin(agent.adminPort, 'GET', '/config_dump')).body) as { configs: { '@type': string; dynamic_listeners?: { name: string }[] }[] };
    const dumped = dump.configs.find((c) => c['@type'].endsWith('ListenersConfigDump'))!;
    expect(dumped.dynamic_listeners!.map((l) => l.name)).to.include(`${IP}_${PORT}`);
    const clusters = (await admin(agent.adminPort, 'GET', '/clusters')).body;
    expect(clusters).to.match(/inbound\|9086\|\|::127\.0\.0\.1:\d+::health_flags::healthy/);
    // Two held connections, one per worker (handed out in turn), show up in the summed gauge.
    const held = [new http.Agent({ keepAlive: true, maxSockets: 1 }), new http.Agent({ keepAlive: true, maxSockets: 1 })];
    try {
      for (const a of held) {
        await new Promise<void>((resolve, reject) =>
          http.get({ host: IP, port: PORT, path: '/', headers: { host: HOST }, agent: a }, (res) => res.resume().on('end', () => resolve())).on('error', reject),
        );
      }
      await eventually('server.total_connections counts both', async () => /server\.total_connections: ([2-9]|\d\d)/.test((await admin(agent.adminPort, 'GET', '/stats')).body));
    } finally {
      for (const a of held) a.destroy();
    }
    expect((await admin(agent.adminPort, 'POST', '/logging?http=debug')).status).to.equal(200);
    const since = agent.output().length;
    await call();
    await call();
    await agent.waitForLog(/request from 127\.0\.0\.1:\d+ on 127\.0\.0\.46:9086/, 10_000, since);
    expect((await admin(agent.adminPort, 'POST', '/logging?http=warning')).status).to.equal(200);
  });

  it('gives every worker each config change', async () => {
    fs.writeFileSync(
      path.join(dir, 'deny.yaml'),
      `apiVersion: security.mesh.io/v1
kind: AuthorizationPolicy
metadata: { name: deny-all, namespace: conc }
spec:
  selector: { matchLabels: { app: shop } }
  action: DENY
  rules: [{}]
`,
    );
    // Fresh connections go to the workers in turn: six in a row all denied means both have the policy.
    await eventually('both workers deny', async () => (await Promise.all(Array.from({ length: 6 }, () => call()))).every((a) => a.status === 403));
  });

  it('replaces a worker that dies, with the current config, and reports it', async () => {
    const [victim, survivor] = pids;
    const since = agent.output().length;
    process.kill(victim, 'SIGKILL');
    await agent.waitForLog(new RegExp(`built-in proxy worker \\d+ \\(pid ${victim}\\) exited \\(SIGKILL\\); starting another`), 10_000, since);
    const replaced = await agent.waitForLog(/built-in proxy worker \d+ \(pid (\d+)\) is serving with the current config/, 20_000, since);
    const fresh = Number(/pid (\d+)/.exec(replaced)![1]);
    expect(fresh).to.not.be.oneOf([victim, survivor]);
    expect((await admin(agent.adminPort, 'GET', '/ready')).status).to.equal(200);
    // The replacement got the DENY policy too, not just the first config.
    const answers = await Promise.all(Array.from({ length: 6 }, () => call()));
    expect(answers.map((a) => a.status)).to.deep.equal(Array(6).fill(403));
    expect(() => process.kill(survivor, 0), 'the other worker kept running').to.not.throw();
  });
});
