/**
 * Issue acceptance (reliability): real daemon and agent processes, the daemon started late,
 * SIGKILLed and restarted on the same address. The agent's built-in proxy and proxyless gRPC
 * clients through the agent reconnect by themselves, keep serving their last good config
 * during an outage, and apply what changed meanwhile soon after the daemon is back.
 */
import { expect } from 'chai';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { RunningAgent, startAgent } from '../../helpers/agent';
import { RunningDaemon, startDaemon } from '../../helpers/daemon';
import { httpGet, metricValue } from '../../helpers/http';
import { HttpApp, request, startHttpApp } from '../../helpers/http-apps';
import { workloadServiceYaml } from '../../helpers/push';
import { ECHO_SERVICE, echoServiceYaml, freePort, node, SERVER_SCRIPT } from '../../modules/security/mtls/grpc-workloads';
import { usesSharedLoopbackNetwork } from '../../helpers/shared-network';

usesSharedLoopbackNetwork();

const NS = 'foo';
const HOST = `httpbin.${NS}.svc.cluster.local`;
const DAEMON_ENV = { PILOT_DEBOUNCE_AFTER: '10ms', PILOT_DEBOUNCE_MAX: '100ms' };

function denyPathsYaml(paths: string[]): string {
  return `
apiVersion: security.mesh.io/v1
kind: AuthorizationPolicy
metadata: { name: deny-paths, namespace: ${NS} }
spec:
  selector: { matchLabels: { app: httpbin } }
  action: DENY
  rules:
  - to: [{ operation: { paths: ${JSON.stringify(paths)} } }]
`;
}

/** The daemon on a fixed plaintext xDS address, so a restarted one is found where the last one was. */
class RestartableDaemon {
  current?: RunningDaemon;
  constructor(
    readonly configDir: string,
    readonly grpcPort: number,
  ) {}

  /** Starts it; resolves with when the process was spawned (the clock of "within 5 s of start"). */
  async start(): Promise<number> {
    const spawnedAt = Date.now();
    this.current = await startDaemon(['--configDir', this.configDir, '--grpcAddr', `127.0.0.1:${this.grpcPort}`], DAEMON_ENV);
    return spawnedAt;
  }

  async kill(): Promise<void> {
    await this.current?.stop('SIGKILL');
    this.current = undefined;
  }
}

/** Polls until `probe` is true; returns the time it first was, or throws with what was last seen. */
async function until(what: string, probe: () => Promise<boolean>, deadline: number, everyMs = 50): Promise<number> {
  for (;;) {
    if (await probe().catch(() => false)) return Date.now();
    if (Date.now() > deadline) throw new Error(`${what}: not so by the deadline`);
    await new Promise((r) => setTimeout(r, everyMs));
  }
}

const statusOf = async (ip: string, p: string) => (await request(ip, 8000, p, { host: HOST })).status;
const readyOf = async (agent: RunningAgent) => (await request('127.0.0.1', agent.statusPort, '/healthz/ready')).status;

async function agentMetric(agent: RunningAgent, name: string): Promise<number> {
  return metricValue(await httpGet(agent.statusPort, '/stats/prometheus'), name);
}

/** Resident memory and open descriptors of a process, from /proc. */
function footprint(pid: number): { rssMiB: number; fds: number } {
  const status = fs.readFileSync(`/proc/${pid}/status`, 'utf8');
  const rssKiB = Number(/VmRSS:\s+(\d+)/.exec(status)![1]);
  return { rssMiB: Math.round(rssKiB / 102.4) / 10, fds: fs.readdirSync(`/proc/${pid}/fd`).length };
}

describe('reliability: the agent reconnects to a daemon that starts late or restarts', function () {
  this.timeout(180_000);
  const ip = '127.0.0.71';
  let dir: string;
  let app: HttpApp;
  let daemon: RestartableDaemon;
  let agent: RunningAgent;

  before(async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'mesh-reliability-'));
    app = await startHttpApp('httpbin');
    fs.writeFileSync(path.join(dir, 'svc.yaml'), workloadServiceYaml({ namespace: NS, name: 'httpbin', address: ip, ports: [`{ number: 8000, name: http, protocol: HTTP, targetPort: ${app.port} }`] }));
    fs.writeFileSync(path.join(dir, 'policy.yaml'), denyPathsYaml(['/blocked*']));
    daemon = new RestartableDaemon(dir, await freePort('127.0.0.1'));
  });
  after(async () => {
    await agent?.stop();
    await daemon?.kill();
    await app?.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it('an agent started 3 s before the daemon is ready and enforcing within 5 s of the daemon start', async () => {
    // Short keepalive, so the frozen-daemon case below is noticed in seconds.
    agent = await startAgent({ grpcPort: daemon.grpcPort, instanceIp: ip, namespace: NS, labels: { app: 'httpbin', version: 'v1' }, env: { GRPC_KEEPALIVE_INTERVAL: '1s', GRPC_KEEPALIVE_TIMEOUT: '1s' } });
    await new Promise((r) => setTimeout(r, 3000));
    expect(await readyOf(agent), 'not ready without a daemon').to.equal(503);
    expect(agent.output()).to.match(/the daemon \S+ is unreachable for \d+\.\d s/);

    const startedAt = await daemon.start();
    const enforcingAt = await until('ready and enforcing', async () => (await readyOf(agent)) === 200 && (await statusOf(ip, '/blocked')) === 403, startedAt + 15_000);
    console.log(`      ready and enforcing ${enforcingAt - startedAt} ms after the daemon was started`);
    expect(enforcingAt - startedAt).to.be.below(5000);
    expect(await statusOf(ip, '/ok')).to.equal(200);
  });

  it('keeps its answers while the daemon is down, and enforces a policy changed meanwhile within 5 s of the restart', async () => {
    await daemon.kill();
    fs.writeFileSync(path.join(dir, 'policy.yaml'), denyPathsYaml(['/blocked*', '/later*']));
    // The outage: the last good config keeps serving, readiness stays true, the metric tells.
    await until('the agent notices the outage', async () => (await agentMetric(agent, 'mesh_agent_xds_connected')) === 0, Date.now() + 10_000);
    for (let i = 0; i < 5; i++) {
      expect(await statusOf(ip, '/ok')).to.equal(200);
      expect(await statusOf(ip, '/blocked')).to.equal(403);
      expect(await statusOf(ip, '/later')).to.equal(200);
      expect(await readyOf(agent)).to.equal(200);
      await new Promise((r) => setTimeout(r, 200));
    }
    expect(await agentMetric(agent, 'mesh_agent_xds_disconnected_seconds')).to.be.above(0);
    expect(agent.output()).to.match(/lost the daemon \S+ \(.*\); proxies keep their last good config and reconnect once it is back/);

    const restartedAt = await daemon.start();
    const enforcedAt = await until('the new DENY enforced', async () => (await statusOf(ip, '/later')) === 403, restartedAt + 15_000);
    console.log(`      policy changed during the outage enforced ${enforcedAt - restartedAt} ms after the restart`);
    expect(enforcedAt - restartedAt).to.be.below(5000);
    expect(await statusOf(ip, '/ok')).to.equal(200);
    await until('reconnection logged', async () => /the daemon \S+ answers again after \d+\.\d s/.test(agent.output()), Date.now() + 5000);
    expect(await agentMetric(agent, 'mesh_agent_xds_reconnects_total')).to.be.at.least(1);
    expect(await agentMetric(agent, 'mesh_agent_xds_disconnected_seconds')).to.equal(0);
  });

  it('notices a daemon that froze (SIGSTOP: the connection stays open, nothing answers) by keepalive, and comes back when it thaws', async () => {
    const frozen = daemon.current!.process;
    const reconnects = await agentMetric(agent, 'mesh_agent_xds_reconnects_total');
    frozen.kill('SIGSTOP');
    try {
      await until('the frozen daemon noticed', async () => (await agentMetric(agent, 'mesh_agent_xds_connected')) === 0, Date.now() + 10_000);
      expect(await statusOf(ip, '/later')).to.equal(403);
      expect(await readyOf(agent)).to.equal(200);
    } finally {
      frozen.kill('SIGCONT');
    }
    await until('reconnected to the thawed daemon', async () => (await agentMetric(agent, 'mesh_agent_xds_reconnects_total')) > reconnects, Date.now() + 10_000);
  });

  it('survives 20 restarts in a row without growing (RSS and descriptors printed)', async () => {
    const pid = agent.process.pid!;
    const samples: { rssMiB: number; fds: number }[] = [];
    for (let i = 1; i <= 20; i++) {
      const before = await agentMetric(agent, 'mesh_agent_xds_reconnects_total');
      await daemon.kill();
      await daemon.start();
      await until(`reconnect ${i}`, async () => (await agentMetric(agent, 'mesh_agent_xds_reconnects_total')) > before, Date.now() + 15_000);
      expect(await statusOf(ip, '/later')).to.equal(403);
      samples.push(footprint(pid));
    }
    console.log(`      agent after each restart: ${samples.map((s) => `${s.rssMiB} MiB/${s.fds} fds`).join(', ')}`);
    const settled = samples[4];
    const last = samples[samples.length - 1];
    // Descriptors move by a few between samples (sockets closing as others open); a leak only
    // grows. So the fewest of the last five must not pass the most of five early ones: 15 leaked
    // channels would add 15. RSS moves with the GC, so it gets a margin well below what 15
    // leaked channels with their buffers would add.
    const early = Math.max(...samples.slice(2, 7).map((s) => s.fds));
    const late = Math.min(...samples.slice(-5).map((s) => s.fds));
    expect(late, 'open descriptors').to.be.at.most(early + 2);
    expect(last.rssMiB - settled.rssMiB, 'RSS growth (MiB) over 15 restarts').to.be.below(25);
  });
});

/** A proxyless gRPC client that calls every 100 ms and prints each outcome as a JSON line. */
const STEADY_CLIENT = `
const grpc = require(${JSON.stringify(require.resolve('@grpc/grpc-js'))});
const xds = require(${JSON.stringify(require.resolve('@grpc/grpc-js-xds'))});
xds.register();
const client = new grpc.Client(process.argv[2], grpc.credentials.createInsecure());
const method = ${ECHO_SERVICE}.Echo;
const tick = () => client.makeUnaryRequest(method.path, method.requestSerialize, method.responseDeserialize, {}, new grpc.Metadata(), { deadline: Date.now() + 1000 }, (err) => {
  console.log(JSON.stringify({ at: Date.now(), code: err ? err.code : 0 }));
  setTimeout(tick, 100);
});
tick();
process.on('SIGTERM', () => { client.close(); process.exit(0); });
`;

/** The echo service in plain text, with a DENY of its one method when `denyEcho`. */
function echoConfig(serverIp: string, serverPort: number, denyEcho: boolean): string {
  const deny = `---
apiVersion: security.mesh.io/v1
kind: AuthorizationPolicy
metadata: { name: echo-deny, namespace: ${NS} }
spec:
  selector: { matchLabels: { app: echo } }
  action: DENY
  rules:
  - to: [{ operation: { paths: ["/mesh.test.Echo/Echo"] } }]
`;
  return echoServiceYaml(serverIp, serverPort, '{ app: echo }') + (denyEcho ? deny : '');
}

describe('reliability: proxyless gRPC through the agent across daemon restarts', function () {
  this.timeout(120_000);
  const serverIp = '127.0.0.72';
  let dir: string;
  let daemon: RestartableDaemon;
  const agents: RunningAgent[] = [];
  const children: ReturnType<typeof node>[] = [];

  const outcomes = (c: ReturnType<typeof node>) =>
    c
      .output()
      .split('\n')
      .filter((l) => l.startsWith('{'))
      .map((l) => JSON.parse(l) as { at: number; code: number });

  before(async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'mesh-reliability-grpc-'));
    fs.mkdirSync(path.join(dir, 'config'));
    const serverPort = await freePort(serverIp);
    fs.writeFileSync(path.join(dir, 'config', 'echo.yaml'), echoConfig(serverIp, serverPort, false));
    fs.writeFileSync(path.join(dir, 'client.js'), STEADY_CLIENT);
    fs.writeFileSync(path.join(dir, 'server.js'), SERVER_SCRIPT);
    daemon = new RestartableDaemon(path.join(dir, 'config'), await freePort('127.0.0.1'));
    await daemon.start();
    const grpcAgent = async (ip: string, app: string) => {
      const a = await startAgent({ grpcPort: daemon.grpcPort, instanceIp: ip, namespace: NS, labels: { app }, env: { MESH_META_GENERATOR: 'grpc', GRPC_XDS_BOOTSTRAP: 'grpc-bootstrap.json' } });
      agents.push(a);
      return path.join(a.workDir, 'grpc-bootstrap.json');
    };
    const serverBootstrap = await grpcAgent(serverIp, 'echo');
    const clientBootstrap = await grpcAgent('127.0.0.73', 'caller');
    const server = node(path.join(dir, 'server.js'), [`${serverIp}:${serverPort}`], { GRPC_XDS_BOOTSTRAP: serverBootstrap, GRPC_XDS_EXPERIMENTAL_RBAC: 'true' });
    children.push(server);
    await until('the echo server serves', async () => /serving on \d+/.test(server.output()), Date.now() + 20_000);
    children.push(node(path.join(dir, 'client.js'), [`xds:///echo.${NS}.svc.cluster.local:7070`], { GRPC_XDS_BOOTSTRAP: clientBootstrap }));
  });
  after(async () => {
    for (const c of children) if (c.child.exitCode === null) c.child.kill('SIGTERM');
    for (const a of agents) await a.stop();
    await daemon?.kill();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it('calls keep succeeding during the outage, and a DENY added meanwhile holds within 5 s of the restart', async () => {
    const client = children[1];
    await until('the client gets answers', async () => outcomes(client).some((o) => o.code === 0), Date.now() + 20_000);

    await daemon.kill();
    const downAt = Date.now();
    fs.writeFileSync(path.join(dir, 'config', 'echo.yaml'), echoConfig(serverIp, Number(/grpc: (\d+)/.exec(fs.readFileSync(path.join(dir, 'config', 'echo.yaml'), 'utf8'))![1]), true));
    await new Promise((r) => setTimeout(r, 3000));
    const duringOutage = outcomes(client).filter((o) => o.at > downAt + 200);
    expect(duringOutage.length, 'calls made during the outage').to.be.above(10);
    expect(duringOutage.every((o) => o.code === 0), JSON.stringify(duringOutage.filter((o) => o.code !== 0))).to.equal(true);

    const restartedAt = await daemon.start();
    const deniedAt = await until('PERMISSION_DENIED', async () => outcomes(client).some((o) => o.at > restartedAt && o.code === 7), restartedAt + 15_000).catch((err: Error) => {
      const since = outcomes(client).filter((o) => o.at > restartedAt);
      throw new Error(`${err.message}; client codes since the restart: ${since.map((o) => o.code).join(',')}\nserver:\n${children[0].output()}\nserver agent:\n${agents[0].output()}`);
    });
    console.log(`      DENY added during the outage enforced on the gRPC server ${deniedAt - restartedAt} ms after the restart`);
    expect(deniedAt - restartedAt).to.be.below(5000);
  });
});
