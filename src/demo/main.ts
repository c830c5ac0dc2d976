/**
 * `npm start`: a local demo on the bundled samples. Starts a JWKS server with a fresh sample key
 * (127.0.0.1:8081), the sample HTTP app (127.0.0.1:8090), the sample echo gRPC backends
 * (samples/config/echo.yaml: 127.0.0.21:7070 and 127.0.0.22:7070), the daemon on
 * samples/config, and the agent with the built-in proxy for the httpbin workload
 * (127.0.0.10:8000). Then it prints curl commands with tokens that get 200, 401 and 403, and
 * the proxyless gRPC client's command, each checked once before it is shown. The logs go to a
 * temporary directory, removed when the demo is stopped and kept when something failed.
 */
import { ChildProcess, execFile, spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as http from 'node:http';
import * as os from 'node:os';
import * as path from 'node:path';
import { exportJWK, generateKeyPair, SignJWT } from 'jose';
import { processEnvironment } from '../modules/settings';
import { EchoServer, startEchoServer } from './grpc-echo';

const ROOT = path.resolve(__dirname, '..', '..', '..');
const ISSUER = 'https://issuer.example.com';
const JWKS_PORT = 8081;
const APP_PORT = 8090;
const WORKLOAD_IP = '127.0.0.10';
const SERVICE_PORT = 8000;
const HOST = 'httpbin.foo.svc.cluster.local';
const STATUS_PORT = 15021;
/** The daemon's default HTTP address (`/ready`). */
const DAEMON_READY_PORT = 8080;
/** The echo service's WorkloadEntries in samples/config/echo.yaml (port 7070, the service port). */
const ECHO_BACKENDS = [
  { name: 'echo-v1', address: '127.0.0.21' },
  { name: 'echo-v2', address: '127.0.0.22' },
];
const ECHO_PORT = 7070;
/** What the README tells a proxyless gRPC client to run, from the repository. */
const ECHO_CLIENT_ENV = { GRPC_XDS_BOOTSTRAP: 'samples/grpc-bootstrap.json' };
const ECHO_CLIENT_ARGS = ['dist/src/demo/echo-client.js'];

/** What the demo started, stopped together; the log directory stays only when something failed. */
class Demo {
  readonly logDir = fs.mkdtempSync(path.join(os.tmpdir(), 'mesh-demo-'));
  private readonly children: ChildProcess[] = [];
  private readonly servers: http.Server[] = [];
  private readonly echoServers: EchoServer[] = [];
  private stopping = false;
  failed = false;

  addServer(server: http.Server): void {
    this.servers.push(server);
  }

  addEchoServer(server: EchoServer): void {
    this.echoServers.push(server);
  }

  /** Runs a program of this package with its output in `<logDir>/<logName>`; an exit before stop() ends the demo. */
  run(program: string, args: string[], env: Record<string, string>, logName: string): ChildProcess {
    const logFile = path.join(this.logDir, logName);
    const log = fs.openSync(logFile, 'a');
    const child = spawn(process.execPath, [path.join(ROOT, 'bin', program), ...args], { cwd: ROOT, env: { ...processEnvironment(), ...env }, stdio: ['ignore', log, log] });
    fs.closeSync(log);
    child.on('exit', (code, signal) => {
      if (this.stopping) return;
      console.error(`\n${program} exited (${code ?? signal}); its log:\n${fs.readFileSync(logFile, 'utf8')}`);
      void this.stop(1);
    });
    this.children.push(child);
    return child;
  }

  anyExited(): boolean {
    return this.children.some((c) => c.exitCode !== null || c.signalCode !== null);
  }

  /** Stops everything, removes the logs unless something failed, and exits with `code`. */
  async stop(code: number): Promise<never> {
    if (!this.stopping) {
      this.stopping = true;
      if (code !== 0) this.failed = true;
      const exited = this.children.map((c) => (c.exitCode !== null || c.signalCode !== null ? Promise.resolve() : new Promise((r) => c.once('exit', r))));
      for (const c of this.children) c.kill('SIGTERM');
      for (const s of this.servers) s.close();
      const stopped = Promise.all([...exited, ...this.echoServers.map((s) => s.stop())]);
      await Promise.race([stopped, new Promise((r) => setTimeout(r, 3000))]);
      if (this.failed) console.error(`the logs are kept in ${this.logDir}`);
      else fs.rmSync(this.logDir, { recursive: true, force: true });
    }
    return process.exit(code);
  }
}

async function main(demo: Demo): Promise<void> {
  for (const signal of ['SIGINT', 'SIGTERM'] as const) {
    process.on(signal, () => {
      console.log('\nstopping the demo');
      void demo.stop(0);
    });
  }

  const { publicKey, privateKey } = await generateKeyPair('RS256');
  const jwk = { ...(await exportJWK(publicKey)), kid: 'demo-key', alg: 'RS256', use: 'sig' };
  demo.addServer(await serve(JWKS_PORT, '127.0.0.1', (_req, res) => res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ keys: [jwk] }))));
  demo.addServer(
    await serve(APP_PORT, '127.0.0.1', (req, res) => {
      const body = JSON.stringify({ method: req.method, path: req.url, headers: req.headers }, null, 2);
      res.writeHead(200, { 'content-type': 'application/json' }).end(body + '\n');
    }),
  );
  for (const backend of ECHO_BACKENDS) demo.addEchoServer(await startEchoServer(backend.name, backend.address, ECHO_PORT));
  console.log(`JWKS server on http://127.0.0.1:${JWKS_PORT}/jwks.json, sample app on 127.0.0.1:${APP_PORT}`);
  console.log(`echo gRPC backends: ${ECHO_BACKENDS.map((b) => `${b.name} on ${b.address}:${ECHO_PORT}`).join(', ')}`);

  demo.run('pilot-discovery', ['discovery', '--configDir', path.join(ROOT, 'samples', 'config')], {}, 'daemon.log');
  console.log(`daemon starting; the logs are in ${demo.logDir} while the demo runs`);
  // The agent starts once the daemon serves, so its first xDS stream finds it.
  await waitReady(demo, DAEMON_READY_PORT, '/ready', 'the daemon');
  demo.run(
    'pilot-agent',
    ['proxy'],
    {
      INSTANCE_IP: WORKLOAD_IP,
      POD_NAME: 'httpbin-v1',
      POD_NAMESPACE: 'foo',
      MESH_METAJSON_LABELS: JSON.stringify({ app: 'httpbin', version: 'v1' }),
      PROXY_CONFIG: JSON.stringify({ discoveryAddress: '127.0.0.1:15010', controlPlaneAuthPolicy: 'NONE', interceptionMode: 'NONE', binaryPath: '/nonexistent/envoy' }),
    },
    'agent.log',
  );
  await waitReady(demo, STATUS_PORT, '/healthz/ready', 'the proxy');

  const sign = (claims: Record<string, unknown>) =>
    new SignJWT(claims).setProtectedHeader({ alg: 'RS256', kid: 'demo-key' }).setIssuer(ISSUER).setIssuedAt().setExpirationTime('24h').sign(privateKey);
  const valid = await sign({ sub: 'alice', groups: ['admins', 'dev'] });
  const claimless = await sign({ sub: 'alice' });
  const invalid = valid.slice(0, -4) + (valid.endsWith('AAAA') ? 'BBBB' : 'AAAA');
  const cases: [string, string | undefined, number][] = [
    ['a valid token of alice in group admins', valid, 200],
    ['an invalid token (bad signature)', invalid, 401],
    ['no token (the ALLOW policy needs one)', undefined, 403],
    ['a valid token without the groups claim', claimless, 403],
  ];
  console.log('\nReady. Try (tokens valid for 24 hours):\n');
  for (const [what, token, expected] of cases) {
    const got = await get(token);
    if (got !== expected) demo.failed = true;
    const check = got === expected ? `checked: ${got}` : `EXPECTED ${expected} BUT GOT ${got}`;
    console.log(`# ${what} → ${expected} (${check})`);
    console.log(`curl -s -o /dev/null -w '%{http_code}\\n' -H 'Host: ${HOST}'${token ? ` -H 'Authorization: Bearer ${token}'` : ''} http://${WORKLOAD_IP}:${SERVICE_PORT}/headers\n`);
  }

  const echo = await runEchoClient();
  if (!echo.ok) demo.failed = true;
  console.log(`# proxyless gRPC (@grpc/grpc-js-xds) to the echo service, 90/10 between v1 and v2; --canary: v2 only (${echo.ok ? `checked: ${echo.output}` : `FAILED: ${echo.output}`})`);
  console.log(`${Object.entries(ECHO_CLIENT_ENV).map(([k, v]) => `${k}=${v}`).join(' ')} node ${ECHO_CLIENT_ARGS.join(' ')}\n`);

  console.log('Edit a file under samples/config (e.g. the AuthorizationPolicy in httpbin.yaml) and the proxy follows within a second.');
  console.log(demo.failed ? `A check failed: the logs will be kept in ${demo.logDir}. Ctrl-C stops the demo.` : 'Ctrl-C stops the demo.');
}

function serve(port: number, host: string, handler: http.RequestListener): Promise<http.Server> {
  return new Promise((resolve, reject) => {
    const server = http.createServer(handler);
    server.once('error', (e) => reject(new Error(`cannot listen on ${host}:${port}: ${e.message} (is another demo running?)`)));
    server.listen(port, host, () => resolve(server));
  });
}

/** Waits until `http://127.0.0.1:<port><urlPath>` answers 200. */
async function waitReady(demo: Demo, port: number, urlPath: string, what: string): Promise<void> {
  const deadline = Date.now() + 60_000;
  while (Date.now() < deadline) {
    if (demo.anyExited()) throw new Error('a component exited during start-up');
    const status = await new Promise<number>((resolve) => {
      http.get({ host: '127.0.0.1', port, path: urlPath, timeout: 500 }, (res) => {
        res.resume();
        resolve(res.statusCode ?? 0);
      }).on('error', () => resolve(0));
    });
    if (status === 200) return;
    await new Promise((r) => setTimeout(r, 300));
  }
  throw new Error(`${what} was not ready on :${port}${urlPath} within 60 s`);
}

function get(token: string | undefined): Promise<number> {
  return new Promise((resolve, reject) => {
    const headers: Record<string, string> = { host: HOST };
    if (token) headers.authorization = `Bearer ${token}`;
    http
      .get({ host: WORKLOAD_IP, port: SERVICE_PORT, path: '/headers', headers, agent: false }, (res) => {
        res.resume();
        resolve(res.statusCode ?? 0);
      })
      .on('error', reject);
  });
}

/** Runs the printed echo-client command once, as a user would from the repository. */
function runEchoClient(): Promise<{ ok: boolean; output: string }> {
  return new Promise((resolve) => {
    execFile(process.execPath, ECHO_CLIENT_ARGS, { cwd: ROOT, env: { ...processEnvironment(), ...ECHO_CLIENT_ENV }, timeout: 30_000 }, (err, stdout, stderr) => {
      resolve({ ok: !err, output: (err ? stderr || err.message : stdout).trim() });
    });
  });
}

const demo = new Demo();
main(demo).catch((e) => {
  console.error(`demo failed: ${e instanceof Error ? e.message : String(e)}`);
  void demo.stop(1);
});
