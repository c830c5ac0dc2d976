/**
 * `npm start`: a local demo of JWT authentication and authorization on the bundled samples.
 * Starts a JWKS server with a fresh sample key (127.0.0.1:8081), the sample HTTP app
 * (127.0.0.1:8090), the daemon on samples/config, and the agent with the built-in proxy for
 * the httpbin workload (127.0.0.10:8000), then prints curl commands with tokens that get 200,
 * 401 and 403, each checked once before it is shown.
 */
import { ChildProcess, spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as http from 'node:http';
import * as os from 'node:os';
import * as path from 'node:path';
import { exportJWK, generateKeyPair, SignJWT } from 'jose';

const ROOT = path.resolve(__dirname, '..', '..', '..');
const ISSUER = 'https://issuer.example.com';
const JWKS_PORT = 8081;
const APP_PORT = 8090;
const WORKLOAD_IP = '127.0.0.10';
const SERVICE_PORT = 8000;
const HOST = 'httpbin.foo.svc.cluster.local';
const STATUS_PORT = 15021;

async function main(): Promise<void> {
  const logDir = fs.mkdtempSync(path.join(os.tmpdir(), 'mesh-demo-'));
  const children: ChildProcess[] = [];
  const servers: http.Server[] = [];
  const stop = () => {
    for (const c of children) c.kill('SIGTERM');
    for (const s of servers) s.close();
  };
  for (const signal of ['SIGINT', 'SIGTERM'] as const) {
    process.on(signal, () => {
      console.log('\nstopping the demo');
      stop();
      setTimeout(() => process.exit(0), 500).unref();
    });
  }

  const { publicKey, privateKey } = await generateKeyPair('RS256');
  const jwk = { ...(await exportJWK(publicKey)), kid: 'demo-key', alg: 'RS256', use: 'sig' };
  servers.push(await serve(JWKS_PORT, '127.0.0.1', (_req, res) => res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ keys: [jwk] }))));
  servers.push(
    await serve(APP_PORT, '127.0.0.1', (req, res) => {
      const body = JSON.stringify({ method: req.method, path: req.url, headers: req.headers }, null, 2);
      res.writeHead(200, { 'content-type': 'application/json' }).end(body + '\n');
    }),
  );
  console.log(`JWKS server on http://127.0.0.1:${JWKS_PORT}/jwks.json, sample app on 127.0.0.1:${APP_PORT}`);

  children.push(run('pilot-discovery', ['discovery', '--configDir', path.join(ROOT, 'samples', 'config')], {}, path.join(logDir, 'daemon.log')));
  children.push(
    run(
      'pilot-agent',
      ['proxy'],
      {
        INSTANCE_IP: WORKLOAD_IP,
        POD_NAME: 'httpbin-v1',
        POD_NAMESPACE: 'foo',
        MESH_METAJSON_LABELS: JSON.stringify({ app: 'httpbin', version: 'v1' }),
        PROXY_CONFIG: JSON.stringify({ discoveryAddress: '127.0.0.1:15010', controlPlaneAuthPolicy: 'NONE', interceptionMode: 'NONE', binaryPath: '/nonexistent/envoy' }),
      },
      path.join(logDir, 'agent.log'),
    ),
  );
  console.log(`daemon and agent starting; logs in ${logDir}`);
  await waitReady(children);

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
    const check = got === expected ? `checked: ${got}` : `EXPECTED ${expected} BUT GOT ${got}`;
    console.log(`# ${what} → ${expected} (${check})`);
    console.log(`curl -s -o /dev/null -w '%{http_code}\\n' -H 'Host: ${HOST}'${token ? ` -H 'Authorization: Bearer ${token}'` : ''} http://${WORKLOAD_IP}:${SERVICE_PORT}/headers\n`);
  }
  console.log('Edit samples/config/httpbin.yaml (e.g. the AuthorizationPolicy) and the proxy follows within a second. Ctrl-C stops the demo.');
}

function serve(port: number, host: string, handler: http.RequestListener): Promise<http.Server> {
  return new Promise((resolve, reject) => {
    const server = http.createServer(handler);
    server.once('error', (e) => reject(new Error(`cannot listen on ${host}:${port}: ${e.message} (is another demo running?)`)));
    server.listen(port, host, () => resolve(server));
  });
}

function run(program: string, args: string[], env: Record<string, string>, logFile: string): ChildProcess {
  const log = fs.openSync(logFile, 'a');
  const child = spawn(process.execPath, [path.join(ROOT, 'bin', program), ...args], { cwd: ROOT, env: { ...process.env, ...env }, stdio: ['ignore', log, log] });
  child.on('exit', (code, signal) => {
    if (signal !== 'SIGTERM' && signal !== 'SIGINT') {
      console.error(`${program} exited (${code ?? signal}); its log:\n${fs.readFileSync(logFile, 'utf8')}`);
      process.exit(1);
    }
  });
  return child;
}

async function waitReady(children: ChildProcess[]): Promise<void> {
  const deadline = Date.now() + 60_000;
  while (Date.now() < deadline) {
    if (children.some((c) => c.exitCode !== null)) throw new Error('a component exited during start-up');
    const status = await new Promise<number>((resolve) => {
      http.get({ host: '127.0.0.1', port: STATUS_PORT, path: '/healthz/ready', timeout: 500 }, (res) => {
        res.resume();
        resolve(res.statusCode ?? 0);
      }).on('error', () => resolve(0));
    });
    if (status === 200) return;
    await new Promise((r) => setTimeout(r, 300));
  }
  throw new Error(`the proxy was not ready on :${STATUS_PORT}/healthz/ready within 60 s`);
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

main().catch((e) => {
  console.error(`demo failed: ${e instanceof Error ? e.message : String(e)}`);
  process.exit(1);
});
