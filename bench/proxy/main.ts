/**
 * Benchmark of the built-in proxy (bench/README.md): requests/s and p50/p99 latency of the
 * sample app called directly and through `pilot-agent proxy` enforcing jwt_authn + RBAC, in
 * the same run. Daemon, agent and app run as their own processes, as in a real mesh.
 *
 *   npm run build && npm run bench:proxy -- [--connections 16] [--seconds 10] [--json]
 */
import { ChildProcess, fork, spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as http from 'node:http';
import type { AddressInfo } from 'node:net';
import * as os from 'node:os';
import * as path from 'node:path';
import { exportJWK, generateKeyPair, SignJWT } from 'jose';
import { LoadResult, percentile, runLoad } from './load';

const REPO_ROOT = path.resolve(__dirname, '..', '..', '..');
const ISS = 'https://issuer.bench.example';
const HOST = 'httpbin.bench.svc.cluster.local';
const WORKLOAD_IP = '127.0.0.90';
const SERVICE_PORT = 8000;

interface Options {
  connections: number;
  seconds: number;
  warmupSeconds: number;
  json: boolean;
}

function parseOptions(argv: string[]): Options {
  const o: Options = { connections: 16, seconds: 10, warmupSeconds: 2, json: false };
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
    else if (a === '--json') o.json = true;
    else if (a === '--help') {
      console.log('npm run bench:proxy -- [--connections N (16)] [--seconds S (10)] [--warmup S (2)] [--json]');
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

function startProcess(program: string, args: string[], env: Record<string, string>, ready: RegExp): Promise<{ child: ChildProcess; match: RegExpExecArray }> {
  const child = spawn(process.execPath, [path.join(REPO_ROOT, 'bin', program), ...args], {
    cwd: REPO_ROOT,
    env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '/tmp', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`${program} not ready within 30 s:\n${out}`)), 30_000);
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

async function main(): Promise<void> {
  const options = parseOptions(process.argv.slice(2));
  const app = fork(path.join(__dirname, 'app.js'), { stdio: 'ignore' });
  const appPort = await new Promise<number>((resolve) => app.once('message', (m: { port: number }) => resolve(m.port)));

  const { publicKey, privateKey } = await generateKeyPair('RS256');
  const jwk = { ...(await exportJWK(publicKey)), kid: 'bench', alg: 'RS256' };
  const jwks = http.createServer((_q, r) => void r.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ keys: [jwk] })));
  await new Promise<void>((r) => jwks.listen(0, '127.0.0.1', r));
  const jwksUri = `http://127.0.0.1:${(jwks.address() as AddressInfo).port}/jwks.json`;

  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'mesh-bench-proxy-'));
  fs.writeFileSync(path.join(dir, 'mesh.yaml'), meshConfig(appPort, jwksUri));
  const daemon = await startProcess('pilot-discovery', ['discovery', '--configDir', dir, '--grpcAddr', '127.0.0.1:0', '--httpAddr', '127.0.0.1:0', '--monitoringAddr', '127.0.0.1:0'], {}, /xDS \(gRPC\) listening on \S+:(\d+)/);
  const agent = await startProcess(
    'pilot-agent',
    ['proxy', '--meshConfig', '/nonexistent'],
    {
      INSTANCE_IP: WORKLOAD_IP,
      POD_NAMESPACE: 'bench',
      MESH_METAJSON_LABELS: JSON.stringify({ app: 'httpbin' }),
      PROXY_STATUS_PORT: '0',
      PROXY_CONFIG: JSON.stringify({ discoveryAddress: `127.0.0.1:${daemon.match[1]}`, controlPlaneAuthPolicy: 'NONE', interceptionMode: 'NONE', binaryPath: '/nonexistent', proxyAdminPort: 0 }),
    },
    /built-in proxy ready/,
  );
  const children = [app, daemon.child, agent.child];
  try {
    const token = await new SignJWT({ groups: ['dev', 'admins'] })
      .setProtectedHeader({ alg: 'RS256', kid: 'bench' })
      .setIssuer(ISS)
      .setSubject('alice')
      .setIssuedAt()
      .setExpirationTime('1h')
      .sign(privateKey);
    const runs: [string, Parameters<typeof runLoad>[0], number][] = [
      ['direct to the app', { host: '127.0.0.1', port: appPort, path: '/get', headers: { host: HOST } }, 200],
      ['through the proxy, JWT + RBAC allow', { host: WORKLOAD_IP, port: SERVICE_PORT, path: '/get', headers: { host: HOST, authorization: `Bearer ${token}` } }, 200],
      ['through the proxy, no token (RBAC 403)', { host: WORKLOAD_IP, port: SERVICE_PORT, path: '/get', headers: { host: HOST } }, 403],
    ];
    const results: { name: string; result: LoadResult }[] = [];
    for (const [name, target, status] of runs) {
      await runLoad(target, options.connections, options.warmupSeconds * 1000, status);
      const result = await runLoad(target, options.connections, options.seconds * 1000, status);
      if (result.requests === 0) throw new Error(`${name}: no request got ${status} (statuses ${JSON.stringify(result.statuses)})`);
      results.push({ name, result });
    }
    const rows = results.map(({ name, result }) => ({
      name,
      rps: result.requests / result.seconds,
      p50: percentile(result.latenciesMs, 50),
      p99: percentile(result.latenciesMs, 99),
      errors: result.errors,
    }));
    if (options.json) {
      console.log(JSON.stringify({ options, cpus: os.cpus().length, rows }, null, 2));
    } else {
      console.log(`bench:proxy — ${options.connections} connections, ${options.seconds} s per run, ${os.cpus().length} CPUs (app, daemon, agent and load in separate processes)`);
      console.log(`${'run'.padEnd(42)}${'req/s'.padStart(10)}${'p50 ms'.padStart(10)}${'p99 ms'.padStart(10)}${'errors'.padStart(8)}`);
      for (const r of rows) console.log(`${r.name.padEnd(42)}${r.rps.toFixed(0).padStart(10)}${r.p50.toFixed(2).padStart(10)}${r.p99.toFixed(2).padStart(10)}${String(r.errors).padStart(8)}`);
    }
  } finally {
    for (const c of children) c.kill('SIGTERM');
    jwks.close();
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

main().catch((e) => {
  console.error(`bench:proxy failed: ${e instanceof Error ? e.message : String(e)}`);
  process.exit(1);
});
