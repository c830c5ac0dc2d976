/**
 * Benchmark of the built-in proxy (bench/README.md): requests/s and p50/p99 latency of the
 * sample app called directly and through `pilot-agent proxy` enforcing jwt_authn + RBAC, in
 * the same run, at saturation (wrk) and at a fixed rate (the bench's open-loop generator in
 * worker processes), for each `--concurrency` of the agent. Daemon, agent, app and load
 * generators run as their own processes, as in a real mesh; CPU seconds of the proxy (the
 * agent and its workers) are reported next to wall-clock figures.
 *
 *   npm run build && npm run bench:proxy -- [--concurrency 1,2] [--rate 1000] [--json]
 */
import { ChildProcess, fork, spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as http from 'node:http';
import type { AddressInfo } from 'node:net';
import * as os from 'node:os';
import * as path from 'node:path';
import { exportJWK, generateKeyPair, SignJWT } from 'jose';
import { treeCpuSeconds, treeIoCalls } from './cpu';
import { LoadJob, LoadResult, LoadTarget, percentile } from './load';
import { runWrk, wrkAvailable } from './wrk';

const REPO_ROOT = path.resolve(__dirname, '..', '..', '..');
const ISS = 'https://issuer.bench.example';
const HOST = 'httpbin.bench.svc.cluster.local';
const WORKLOAD_IP = '127.0.0.90';
// An unusual port: the outbound listener binds 127.0.0.1 on it, where other programs on a shared machine may sit.
const SERVICE_PORT = 18_000;

interface Options {
  connections: number;
  seconds: number;
  warmupSeconds: number;
  rate: number;
  concurrency: number[];
  loadWorkers: number;
  wrkThreads: number;
  /** Saturation with the bench's own generator even when wrk is installed. */
  noWrk: boolean;
  /** Node flags for the agent (space-separated), e.g. `--cpu-prof --cpu-prof-dir=/tmp/prof` to profile the proxy. */
  agentNodeArgs: string;
  json: boolean;
}

const USAGE = `npm run bench:proxy -- [--connections N (16)] [--seconds S (10)] [--warmup S (2)] [--rate R (1000)]
  [--concurrency LIST (1,2)] [--load-workers N (2)] [--wrk-threads N (2)] [--no-wrk]
  [--agent-node-args '--cpu-prof --cpu-prof-dir=DIR'] [--json]`;

function parseOptions(argv: string[]): Options {
  const o: Options = { connections: 16, seconds: 10, warmupSeconds: 2, rate: 1000, concurrency: [1, 2], loadWorkers: 2, wrkThreads: 2, noWrk: false, agentNodeArgs: '', json: false };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    const num = () => {
      const v = Number(argv[++i]);
      if (!Number.isFinite(v) || v <= 0) throw new Error(`${a} needs a positive number, not ${argv[i]}`);
      return v;
    };
    if (a === '--connections') o.connections = Math.floor(num());
    else if (a === '--seconds') o.seconds = num();
    else if (a === '--warmup') o.warmupSeconds = num();
    else if (a === '--rate') o.rate = num();
    else if (a === '--load-workers') o.loadWorkers = Math.floor(num());
    else if (a === '--wrk-threads') o.wrkThreads = Math.floor(num());
    else if (a === '--concurrency') {
      const list = (argv[++i] ?? '').split(',').map(Number);
      if (list.length === 0 || list.some((n) => !Number.isInteger(n) || n < 0)) throw new Error(`--concurrency needs a list of worker counts (0 = all cores), not ${argv[i]}`);
      o.concurrency = list;
    } else if (a === '--no-wrk') o.noWrk = true;
    else if (a === '--agent-node-args') o.agentNodeArgs = argv[++i] ?? '';
    else if (a === '--json') o.json = true;
    else if (a === '--help') {
      console.log(USAGE);
      process.exit(0);
    } else throw new Error(`unknown option ${a} (try --help)`);
  }
  return o;
}

function meshConfig(appPort: number, jwksUri: string): string {
  return `apiVersion: networking.mesh.io/v1
kind: ServiceEntry
metadata: { name: httpbin, namespace: bench }
spec:
  hosts: ["${HOST}"]
  location: MESH_INTERNAL
  ports: [{ number: ${SERVICE_PORT}, name: http, protocol: HTTP, targetPort: ${appPort} }]
  resolution: STATIC
  workloadSelector: { labels: { app: httpbin } }
---
apiVersion: networking.mesh.io/v1
kind: WorkloadEntry
metadata: { name: httpbin-1, namespace: bench }
spec: { address: ${WORKLOAD_IP}, labels: { app: httpbin } }
---
apiVersion: security.mesh.io/v1
kind: RequestAuthentication
metadata: { name: jwt, namespace: bench }
spec:
  selector: { matchLabels: { app: httpbin } }
  jwtRules: [{ issuer: "${ISS}", jwksUri: "${jwksUri}" }]
---
apiVersion: security.mesh.io/v1
kind: AuthorizationPolicy
metadata: { name: allow-admins, namespace: bench }
spec:
  selector: { matchLabels: { app: httpbin } }
  action: ALLOW
  rules:
    - from: [{ source: { requestPrincipals: ["${ISS}/alice"] } }]
      when: [{ key: "request.auth.claims[groups]", values: ["admins"] }]
`;
}

function startProcess(program: string, args: string[], env: Record<string, string>, ready: RegExp, nodeArgs: string[] = []): Promise<{ child: ChildProcess; match: RegExpExecArray }> {
  const child = spawn(process.execPath, [...nodeArgs, path.join(REPO_ROOT, 'bin', program), ...args], {
    cwd: REPO_ROOT,
    env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '/tmp', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`${program} not ready within 30 s:\n${out}`));
    }, 30_000);
    const onData = (d: Buffer) => {
      out += d;
      const m = ready.exec(out);
      if (m) {
        clearTimeout(timer);
        resolve({ child, match: m });
      }
    };
    child.stdout!.on('data', onData);
    child.stderr!.on('data', onData);
    child.on('exit', (code) => reject(new Error(`${program} exited with ${code}:\n${out}`)));
  });
}


/** Runs one job split over `workers` generator processes and merges their results. */
async function runLoadWorkers(job: LoadJob, workers: number): Promise<LoadResult> {
  const share = (n: number) => Math.max(1, Math.round(n / workers));
  const parts = await Promise.all(
    Array.from({ length: workers }, () => {
      const child = fork(path.join(__dirname, 'load-worker.js'), { stdio: 'inherit', serialization: 'advanced' });
      child.send({ ...job, connections: share(job.connections), rate: job.rate === undefined ? undefined : job.rate / workers });
      return new Promise<LoadResult>((resolve, reject) => {
        child.once('message', (r: LoadResult) => resolve(r));
        child.once('exit', (code) => reject(new Error(`a load worker exited with ${code} before reporting`)));
      });
    }),
  );
  const latencies = new Float64Array(parts.reduce((n, p) => n + p.latenciesMs.length, 0));
  let at = 0;
  for (const p of parts) {
    latencies.set(p.latenciesMs, at);
    at += p.latenciesMs.length;
  }
  const statuses: Record<number, number> = {};
  for (const p of parts) for (const [k, v] of Object.entries(p.statuses)) statuses[Number(k)] = (statuses[Number(k)] ?? 0) + v;
  return {
    requests: parts.reduce((n, p) => n + p.requests, 0),
    errors: parts.reduce((n, p) => n + p.errors, 0),
    unsent: parts.reduce((n, p) => n + p.unsent, 0),
    statuses,
    seconds: Math.max(...parts.map((p) => p.seconds)),
    lagP99Ms: Math.max(...parts.map((p) => p.lagP99Ms ?? 0)),
    latenciesMs: latencies.sort(),
  };
}

/** One request, to check the status before loading a target (a wrong setup fails fast). */
function probe(target: LoadTarget): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = http.get({ host: target.host, port: target.port, path: target.path, headers: target.headers, timeout: 5000 }, (res) => {
      res.resume();
      resolve(res.statusCode ?? 0);
    });
    req.on('error', reject);
    req.on('timeout', () => req.destroy(new Error('no answer within 5 s')));
  });
}

interface Row {
  run: string;
  concurrency?: number;
  mode: 'saturation' | 'fixed rate' | 'generator ceiling';
  generator: 'wrk' | 'node';
  rps: number;
  p50: number;
  p99: number;
  errors: number;
  /** CPU seconds of the proxy (agent + workers) during the run; the app's for direct runs, the bare proxy's for its run. */
  cpuSeconds: number;
  /** Read/write system calls of the same process(es) per request answered. */
  ioCallsPerRequest: number;
  wallSeconds: number;
  /** Requests due but not sent in time (fixed rate only). */
  unsent?: number;
  /** Fixed rate: p99 lateness of the generator's timer (not counted in the latency). */
  generatorLagP99?: number;
}

interface Target {
  name: string;
  target: LoadTarget;
  status: number;
}

async function measure(
  options: Options,
  t: Target,
  mode: Row['mode'],
  cpuPid: number,
  concurrency: number | undefined,
): Promise<Row> {
  const useWrk = mode === 'saturation' && !options.noWrk && wrkAvailable();
  const got = await probe(t.target);
  if (got !== t.status) throw new Error(`${t.name}: expected status ${t.status}, got ${got}`);
  const job = (seconds: number): LoadJob => ({
    target: t.target,
    connections: mode === 'fixed rate' ? 8 * options.loadWorkers : options.connections,
    durationMs: seconds * 1000,
    rate: mode === 'fixed rate' ? options.rate : undefined,
    expectStatus: t.status,
  });
  if (useWrk) await runWrk(t.target, { threads: options.wrkThreads, connections: options.connections, seconds: options.warmupSeconds });
  else await runLoadWorkers(job(options.warmupSeconds), options.loadWorkers);
  const cpu0 = treeCpuSeconds(cpuPid);
  const io0 = treeIoCalls(cpuPid);
  const wall0 = performance.now();
  let row: Omit<Row, 'cpuSeconds' | 'wallSeconds' | 'ioCallsPerRequest'>;
  if (useWrk) {
    const r = await runWrk(t.target, { threads: options.wrkThreads, connections: options.connections, seconds: options.seconds });
    row = { run: t.name, concurrency, mode, generator: 'wrk', rps: r.rps, p50: r.p50, p99: r.p99, errors: t.status < 300 ? r.errors : 0 };
  } else {
    const r = await runLoadWorkers(job(options.seconds), options.loadWorkers);
    if (r.requests === 0) throw new Error(`${t.name}: no request got ${t.status} (statuses ${JSON.stringify(r.statuses)})`);
    row = { run: t.name, concurrency, mode, generator: 'node', rps: r.requests / r.seconds, p50: percentile(r.latenciesMs, 50), p99: percentile(r.latenciesMs, 99), errors: r.errors, unsent: mode === 'fixed rate' ? r.unsent : undefined, generatorLagP99: mode === 'fixed rate' ? r.lagP99Ms : undefined };
  }
  const wallSeconds = (performance.now() - wall0) / 1000;
  return { ...row, cpuSeconds: treeCpuSeconds(cpuPid) - cpu0, ioCallsPerRequest: (treeIoCalls(cpuPid) - io0) / (row.rps * wallSeconds), wallSeconds };
}

async function stopChild(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise<void>((r) => child.once('exit', () => r()));
  child.kill('SIGTERM');
  const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
  await exited;
  clearTimeout(timer);
}

async function main(): Promise<void> {
  const options = parseOptions(process.argv.slice(2));
  const haveWrk = wrkAvailable();
  if (!haveWrk && !options.noWrk) {
    console.error('bench:proxy: wrk is not installed (Debian: apt-get install wrk); saturation is measured with the bench\'s own Node generator, which may be the bottleneck');
  }
  const load0 = os.loadavg();
  const app = fork(path.join(__dirname, 'app.js'), { stdio: 'ignore' });
  const appPort = await new Promise<number>((resolve) => app.once('message', (m: { port: number }) => resolve(m.port)));

  const { publicKey, privateKey } = await generateKeyPair('RS256');
  const jwk = { ...(await exportJWK(publicKey)), kid: 'bench', alg: 'RS256' };
  const jwks = http.createServer((_q, r) => void r.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ keys: [jwk] })));
  await new Promise<void>((r) => jwks.listen(0, '127.0.0.1', r));
  const jwksUri = `http://127.0.0.1:${(jwks.address() as AddressInfo).port}/jwks.json`;

  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'mesh-bench-proxy-'));
  fs.writeFileSync(path.join(dir, 'mesh.yaml'), meshConfig(appPort, jwksUri));
  const children: ChildProcess[] = [app];
  try {
    const daemon = await startProcess('pilot-discovery', [
        'discovery', '--configDir', dir,
        // Every port picked by the system, so another daemon on the machine cannot collide with this one.
        ...['--grpcAddr', '--httpAddr', '--monitoringAddr', '--secureGRPCAddr', '--httpsAddr'].flatMap((flag) => [flag, '127.0.0.1:0']),
        '--ctrlz_port', '0',
      ], {}, /xDS \(gRPC\) listening on \S+:(\d+)/);
    children.push(daemon.child);
    const token = await new SignJWT({ groups: ['dev', 'admins'] })
      .setProtectedHeader({ alg: 'RS256', kid: 'bench' })
      .setIssuer(ISS)
      .setSubject('alice')
      .setIssuedAt()
      .setExpirationTime('1h')
      .sign(privateKey);
    const direct: Target = { name: 'direct to the app', target: { host: '127.0.0.1', port: appPort, path: '/get', headers: { host: HOST } }, status: 200 };
    const allowed: Target = { name: 'proxy, JWT + RBAC allow', target: { host: WORKLOAD_IP, port: SERVICE_PORT, path: '/get', headers: { host: HOST, authorization: `Bearer ${token}` } }, status: 200 };
    const denied: Target = { name: 'proxy, no token (RBAC 403)', target: { host: WORKLOAD_IP, port: SERVICE_PORT, path: '/get', headers: { host: HOST } }, status: 403 };

    const rows: Row[] = [];
    const log = (r: Row) => options.json || console.error(`  ${r.run}${r.concurrency === undefined ? '' : ` (concurrency ${r.concurrency})`}, ${r.mode}: ${r.rps.toFixed(0)} req/s`);
    for (const mode of ['saturation', 'fixed rate', 'generator ceiling'] as const) {
      const row = await measure({ ...options, noWrk: options.noWrk || mode === 'generator ceiling' }, direct, mode === 'generator ceiling' ? 'saturation' : mode, app.pid!, undefined);
      rows.push({ ...row, mode });
      log(rows[rows.length - 1]);
    }
    const references = [
      { script: 'tcp-relay.js', name: 'TCP relay, no HTTP (reference)' },
      { script: 'bare-proxy.js', name: 'bare forwarder, no filters (reference)' },
    ];
    for (const reference of references) {
      const child = fork(path.join(__dirname, reference.script), [String(appPort)], { stdio: 'ignore' });
      children.push(child);
      const port = await new Promise<number>((resolve) => child.once('message', (m: { port: number }) => resolve(m.port)));
      const target: Target = { name: reference.name, target: { host: '127.0.0.1', port, path: '/get', headers: { host: HOST } }, status: 200 };
      rows.push(await measure(options, target, 'saturation', child.pid!, undefined));
      log(rows[rows.length - 1]);
      await stopChild(child);
    }
    for (const concurrency of options.concurrency) {
      const agent = await startProcess(
        'pilot-agent',
        ['proxy', '--meshConfig', '/nonexistent', '--concurrency', String(concurrency)],
        {
          INSTANCE_IP: WORKLOAD_IP,
          POD_NAMESPACE: 'bench',
          MESH_METAJSON_LABELS: JSON.stringify({ app: 'httpbin' }),
          PROXY_STATUS_PORT: '0',
          MINIMUM_DRAIN_DURATION: '0s',
          PROXY_CONFIG: JSON.stringify({ discoveryAddress: `127.0.0.1:${daemon.match[1]}`, controlPlaneAuthPolicy: 'NONE', interceptionMode: 'NONE', binaryPath: '/nonexistent', proxyAdminPort: 0 }),
        },
        /built-in proxy ready/,
        options.agentNodeArgs.split(' ').filter(Boolean),
      );
      try {
        for (const [t, mode] of [[allowed, 'saturation'], [allowed, 'fixed rate'], [denied, 'saturation']] as const) {
          rows.push(await measure(options, t, mode, agent.child.pid!, concurrency));
          log(rows[rows.length - 1]);
        }
      } finally {
        await stopChild(agent.child);
      }
    }
    report(options, rows, { haveWrk, load0, load1: os.loadavg() });
  } finally {
    for (const c of children) await stopChild(c);
    jwks.close();
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

function report(options: Options, rows: Row[], env: { haveWrk: boolean; load0: number[]; load1: number[] }): void {
  const directOf = (mode: Row['mode']) => rows.find((r) => r.run === 'direct to the app' && r.mode === mode);
  const summary = options.concurrency.map((concurrency) => {
    const sat = rows.find((r) => r.concurrency === concurrency && r.mode === 'saturation' && r.run.includes('allow'));
    const fixed = rows.find((r) => r.concurrency === concurrency && r.mode === 'fixed rate');
    const one = rows.find((r) => r.concurrency === options.concurrency[0] && r.mode === 'saturation' && r.run.includes('allow'));
    return {
      concurrency,
      ratioToDirect: sat && directOf('saturation') ? sat.rps / directOf('saturation')!.rps : NaN,
      addedP99AtRateMs: fixed && directOf('fixed rate') ? fixed.p99 - directOf('fixed rate')!.p99 : NaN,
      scalingVsFirst: sat && one ? sat.rps / one.rps : NaN,
      cpuMicrosPerRequest: sat ? (sat.cpuSeconds / (sat.rps * sat.wallSeconds)) * 1e6 : NaN,
    };
  });
  const machine = { cpus: os.cpus().length, model: os.cpus()[0]?.model, loadavgBefore: env.load0, loadavgAfter: env.load1 };
  if (options.json) {
    console.log(JSON.stringify({ options, machine, wrk: env.haveWrk, rows, summary }, null, 2));
    return;
  }
  console.log(
    `bench:proxy — ${options.connections} connections at saturation (${env.haveWrk && !options.noWrk ? `wrk, ${options.wrkThreads} threads` : 'Node generator'}), ` +
      `${options.rate} req/s fixed rate (Node open-loop generator, ${options.loadWorkers} processes), ${options.seconds} s per run`,
  );
  console.log(`machine: ${machine.cpus} CPUs (${machine.model}), load average ${env.load0.map((l) => l.toFixed(2)).join(' ')} before, ${env.load1.map((l) => l.toFixed(2)).join(' ')} after (shared machine: wall figures vary, CPU figures less)`);
  console.log(
    `${'run'.padEnd(34)}${'conc'.padStart(5)}${'mode'.padStart(26)}${'req/s'.padStart(9)}${'p50 ms'.padStart(8)}${'p99 ms'.padStart(8)}${'err'.padStart(6)}` +
      `${'CPU s'.padStart(7)}${'wall s'.padStart(7)}${'CPU µs/req'.padStart(11)}${'r+w calls/req'.padStart(14)}`,
  );
  for (const r of rows) {
    console.log(
      `${r.run.padEnd(34)}${(r.concurrency === undefined ? '-' : String(r.concurrency)).padStart(5)}${`${r.mode} (${r.generator})`.padStart(26)}${r.rps.toFixed(0).padStart(9)}` +
        `${r.p50.toFixed(2).padStart(8)}${r.p99.toFixed(2).padStart(8)}${String(r.errors + (r.unsent ?? 0)).padStart(6)}${r.cpuSeconds.toFixed(1).padStart(7)}${r.wallSeconds.toFixed(1).padStart(7)}` +
        `${((r.cpuSeconds / (r.rps * r.wallSeconds)) * 1e6).toFixed(0).padStart(11)}${r.ioCallsPerRequest.toFixed(1).padStart(14)}`,
    );
  }
  const lag = Math.max(...rows.map((r) => r.generatorLagP99 ?? 0));
  const ceiling = rows.find((r) => r.mode === 'generator ceiling');
  const bare = rows.find((r) => r.run.startsWith('bare'));
  const relay = rows.find((r) => r.run.startsWith('TCP relay'));
  console.log(
    `fixed-rate generator: ceiling ${ceiling?.rps.toFixed(0)} req/s against the app (${options.rate} req/s is ${((options.rate / (ceiling?.rps ?? NaN)) * 100).toFixed(0)} % of it), ` +
      `its timer p99 ${lag.toFixed(2)} ms late (not counted in latency)`,
  );
  const perCore = (r: Row | undefined) => (r ? 1 / (r.cpuSeconds / (r.rps * r.wallSeconds)) : NaN);
  const proxyOne = rows.find((r) => r.concurrency !== undefined && r.mode === 'saturation' && r.run.includes('allow'));
  console.log(
    `per CPU core (1 / CPU per request, steadier than req/s on a shared machine): app ${perCore(directOf('saturation')).toFixed(0)} req/s, ` +
      `TCP relay ${perCore(relay).toFixed(0)}, bare forwarder ${perCore(bare).toFixed(0)}, built-in proxy with JWT + RBAC ${perCore(proxyOne).toFixed(0)} (${((perCore(proxyOne) / perCore(directOf('saturation'))) * 100).toFixed(0)} % of the app's)`,
  );
  const direct = directOf('saturation');
  if (relay && direct) console.log(`TCP relay: ${((relay.rps / direct.rps) * 100).toFixed(0)} % of direct req/s (the most any proxy in a Node process gets here)`);
  if (bare && direct) console.log(`bare forwarder: ${((bare.rps / direct.rps) * 100).toFixed(0)} % of direct req/s (the built-in proxy's HTTP stack with no filters)`);
  for (const s of summary) {
    console.log(
      `concurrency ${s.concurrency}: ${(s.ratioToDirect * 100).toFixed(0)} % of direct req/s, p99 added at ${options.rate} req/s ${s.addedP99AtRateMs.toFixed(2)} ms, ` +
        `${s.cpuMicrosPerRequest.toFixed(0)} µs proxy CPU per request` + (s.concurrency !== options.concurrency[0] ? `, ${s.scalingVsFirst.toFixed(2)}× the req/s of concurrency ${options.concurrency[0]}` : ''),
    );
  }
}

main().catch((e) => {
  console.error(`bench:proxy failed: ${e instanceof Error ? e.message : String(e)}`);
  process.exit(1);
});
