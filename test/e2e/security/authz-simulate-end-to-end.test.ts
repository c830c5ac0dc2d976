/**
 * Issue acceptance (x authz simulate): for spec/01's JWT behaviours and a matrix of more than
 * 50 requests (path templates, methods, plain, nested and list claims, principals, namespaces,
 * ipBlocks, DENY over ALLOW, AUDIT, dry-run), the simulator's answer equals what the built-in
 * proxy answers on the same config, request by request, and names the rule that decided.
 * One world: a daemon reading a config directory, an agent (mutual TLS with a certificate from
 * the daemon's CA) in front of an app, a second agent for a workload no policy selects. The
 * requests go to the real proxy over real HTTP (and HTTPS with client certificates from the
 * CA); the simulator runs once, as a process, on the same directory with the whole matrix.
 */
import { expect } from 'chai';
import * as fs from 'node:fs';
import * as http from 'node:http';
import * as https from 'node:https';
import * as os from 'node:os';
import * as path from 'node:path';
import * as grpc from '@grpc/grpc-js';
import { stringify } from 'yaml';
import { caClientConstructor } from '../../../src/modules/security/ca';
import { RunningAgent, startAgent } from '../../helpers/agent';
import { RunningDaemon, startDaemon } from '../../helpers/daemon';
import { HttpApp, startHttpApp } from '../../helpers/http-apps';
import { eventually, JwksServer, SigningKey, signingKey, startJwksServer, token } from '../../helpers/jwt';
import { workloadServiceYaml } from '../../helpers/push';
import { runCli } from '../../helpers/run-cli';
import { makeCsr } from '../../modules/security/ca/helpers';
import { usesSharedLoopbackNetwork } from '../../helpers/shared-network';

usesSharedLoopbackNetwork();

const ORCH_ISSUER = 'https://orch.test';
const ISS = 'https://issuer.example.com';
const OTHER_ISS = 'https://other.example.com';
const SERVER_IP = '127.0.0.91';
const OPEN_IP = '127.0.0.92';
const PORT = 8000;
const HOST = 'httpbin.foo.svc.cluster.local';

const POLICIES = `
apiVersion: security.mesh.io/v1
kind: RequestAuthentication
metadata: { name: jwt, namespace: foo }
spec:
  jwtRules:
    - issuer: "${ISS}"
      jwksUri: "@JWKS@"
      audiences: ["httpbin"]
    - issuer: "${OTHER_ISS}"
      jwksUri: "@OTHER_JWKS@"
      fromHeaders: [{ name: x-jwt-assertion }]
---
apiVersion: security.mesh.io/v1
kind: AuthorizationPolicy
metadata: { name: deny-admin, namespace: foo }
spec:
  selector: { matchLabels: { app: httpbin } }
  action: DENY
  rules:
    - to: [{ operation: { paths: ["/admin*"] } }]
    - from: [{ source: { ipBlocks: ["127.0.0.66/32"] } }]
    - to: [{ operation: { methods: ["DELETE"] } }]
      from: [{ source: { notNamespaces: ["ops"] } }]
---
apiVersion: security.mesh.io/v1
kind: AuthorizationPolicy
metadata: { name: allow-api, namespace: foo }
spec:
  selector: { matchLabels: { app: httpbin } }
  action: ALLOW
  rules:
    - to: [{ operation: { methods: ["GET"], paths: ["/api/{*}/items"] } }]
    - from: [{ source: { requestPrincipals: ["${ISS}/alice", "${OTHER_ISS}/carol"] } }]
      when: [{ key: "request.auth.claims[groups]", values: ["admins"] }]
    - from: [{ source: { principals: ["cluster.local/ns/frontend/sa/buyer"] } }]
      to: [{ operation: { methods: ["GET", "POST"], paths: ["/shop/*"] } }]
    - from: [{ source: { namespaces: ["ops"] } }]
    - from: [{ source: { requestPrincipals: ["*"] } }]
      when: [{ key: "request.auth.claims[org][team]", values: ["platform"] }]
    - to: [{ operation: { methods: ["GET"], paths: ["*.json"] } }]
    - from: [{ source: { ipBlocks: ["127.0.0.80/29"] } }]
      to: [{ operation: { paths: ["/internal/*"] } }]
    - from: [{ source: { requestPrincipals: ["${OTHER_ISS}/*"] } }]
      when: [{ key: "request.auth.claims[scope]", values: ["read:items"] }]
    - to: [{ operation: { hosts: ["api.example.com"], ports: ["${PORT}"], paths: ["/host-only"] } }]
---
apiVersion: security.mesh.io/v1
kind: AuthorizationPolicy
metadata: { name: audit-writes, namespace: foo }
spec:
  selector: { matchLabels: { app: httpbin } }
  action: AUDIT
  rules: [{ to: [{ operation: { methods: ["POST", "PUT"] } }] }]
---
apiVersion: security.mesh.io/v1
kind: AuthorizationPolicy
metadata: { name: dry-deny-shop, namespace: foo, annotations: { mesh.io/dry-run: "true" } }
spec:
  selector: { matchLabels: { app: httpbin } }
  action: DENY
  rules: [{ to: [{ operation: { paths: ["/shop/*"] } }] }]
`;

/** A request of the matrix: sent to the proxy as is, and written into the simulator's requests file. */
interface Case {
  name: string;
  path: string;
  method?: string;
  host?: string;
  headers?: Record<string, string>;
  token?: string;
  /** `<ns>/<sa>`: sent over mutual TLS with a certificate of that identity. */
  identity?: string;
  sourceIp?: string;
  /** The open workload (no AuthorizationPolicy) instead of httpbin. */
  open?: boolean;
  /** Expected status and deciding rule (`none` when no rule decides). */
  status: number;
  rule: string;
  /** An AUDIT rule that must match, and a dry-run rule that must match. */
  audit?: string;
  dryRun?: string;
}

describe('meshctl x authz simulate answers as the built-in proxy does (end to end)', function () {
  this.timeout(120_000);
  let dir: string;
  let orchKey: SigningKey;
  let orchJwks: JwksServer;
  let rsa: SigningKey;
  let other: SigningKey;
  let jwks: JwksServer;
  let otherJwks: JwksServer;
  let app: HttpApp;
  let daemon: RunningDaemon;
  const agents: RunningAgent[] = [];
  let ca: grpc.Client;
  const certs = new Map<string, { key: string; cert: string }>();
  let root: string;

  const saToken = (ns: string, sa: string) => token(orchKey, { iss: ORCH_ISSUER, sub: `system:serviceaccount:${ns}:${sa}`, aud: 'mesh-ca' });

  async function certificateOf(identity: string): Promise<{ key: string; cert: string }> {
    const known = certs.get(identity);
    if (known) return known;
    const [ns, sa] = identity.split('/');
    const csr = await makeCsr();
    const metadata = new grpc.Metadata();
    metadata.set('authorization', `Bearer ${await saToken(ns, sa)}`);
    const chain = await new Promise<string[]>((resolve, reject) =>
      (ca as unknown as Record<string, Function>).CreateCertificate({ csr: csr.csrPem, validity_duration: 3600 }, metadata, (err: grpc.ServiceError | null, r: { cert_chain: string[] }) =>
        err ? reject(err) : resolve(r.cert_chain),
      ),
    );
    const issued = { key: csr.keyPem, cert: chain.join('') };
    certs.set(identity, issued);
    return issued;
  }

  /** The status the real proxy answers (a closed connection counts as 403, as the simulator counts it). */
  async function send(c: Case): Promise<number> {
    const headers: Record<string, string> = { host: c.host ?? HOST, ...(c.headers ?? {}) };
    if (c.token) headers.authorization = `Bearer ${c.token}`;
    const options: https.RequestOptions = {
      host: c.open ? OPEN_IP : SERVER_IP, port: PORT, path: c.path, method: c.method ?? 'GET', headers, agent: false, localAddress: c.sourceIp ?? '127.0.0.1',
    };
    const tls = c.identity ? { ...(await certificateOf(c.identity)), ca: root, checkServerIdentity: () => undefined } : undefined;
    return new Promise((resolve, reject) => {
      const req = (tls ? https.request({ ...options, ...tls }) : http.request(options)).on('response', (res) => {
        res.resume();
        res.on('end', () => resolve(res.statusCode ?? 0));
      });
      req.setTimeout(10_000, () => req.destroy(new Error(`${c.name}: no answer within 10s`)));
      req.on('error', (err: NodeJS.ErrnoException) => (err.code === 'ECONNRESET' ? resolve(403) : reject(err)));
      req.end();
    });
  }

  /** The simulator's requests-file entry for a case. */
  function entry(c: Case): Record<string, unknown> {
    const out: Record<string, unknown> = { name: c.name, path: c.path, method: c.method ?? 'GET', expect: { status: c.status, rule: c.rule } };
    if (c.open) out.to = 'open-v1.foo';
    if (c.host) out.host = c.host;
    if (c.headers) out.headers = c.headers;
    if (c.token) out.token = c.token;
    if (c.identity) out.principal = `spiffe://cluster.local/ns/${c.identity.split('/')[0]}/sa/${c.identity.split('/')[1]}`;
    if (c.sourceIp) out.sourceIp = c.sourceIp;
    return out;
  }

  /** Runs the simulator once on the config directory with these cases; its JSON answers by case. */
  async function simulate(cases: Case[], file: string): Promise<{ code: number | null; answers: Record<string, unknown>[]; stderr: string }> {
    fs.writeFileSync(file, stringify(cases.map(entry)));
    const result = await runCli('meshctl', ['x', 'authz', 'sim', '-f', path.join(dir, 'config'), '--to-labels', 'app=httpbin', '-n', 'foo', '--port', String(PORT), '--requests', file, '-o', 'json'], { timeoutMs: 60_000 });
    let answers: Record<string, unknown>[];
    try {
      answers = JSON.parse(result.stdout);
    } catch {
      throw new Error(`simulator output is not JSON (exit ${result.code}): ${result.stdout.slice(0, 500)} ${result.stderr}`);
    }
    return { code: result.code, answers, stderr: result.stderr };
  }

  /** Every case: the proxy's status, the simulator's status and rule; all mismatches reported together. */
  async function compare(cases: Case[], file: string): Promise<void> {
    const proxy: number[] = [];
    for (const c of cases) proxy.push(await send(c));
    const sim = await simulate(cases, file);
    expect(sim.answers, sim.stderr).to.have.length(cases.length);
    const problems: string[] = [];
    cases.forEach((c, i) => {
      const a = sim.answers[i] as { status?: number; matched?: { rule: string }; rules: { action: string; matched?: string }[]; dryRun: { matched?: string }[]; reason: string };
      const simStatus = a.status ?? 403;
      if (proxy[i] !== c.status) problems.push(`${c.name}: the proxy answered ${proxy[i]}, the case expects ${c.status}`);
      if (simStatus !== proxy[i]) problems.push(`${c.name}: the simulator answered ${simStatus} (${a.reason}), the proxy ${proxy[i]}`);
      if ((a.matched?.rule ?? 'none') !== c.rule) problems.push(`${c.name}: the simulator names ${a.matched?.rule ?? 'none'} as deciding, expected ${c.rule}`);
      if (c.audit && !a.rules.some((e) => e.action === 'AUDIT' && e.matched === c.audit)) problems.push(`${c.name}: AUDIT rule ${c.audit} not reported as matched`);
      if (!c.audit && a.rules.some((e) => e.action === 'AUDIT' && e.matched)) problems.push(`${c.name}: an AUDIT rule is reported as matched`);
      if ((a.dryRun.find((e) => e.matched)?.matched ?? undefined) !== c.dryRun) problems.push(`${c.name}: dry-run match ${a.dryRun.find((e) => e.matched)?.matched} expected ${c.dryRun}`);
    });
    expect(problems, problems.join('\n')).to.deep.equal([]);
    expect(sim.code, 'every expectation met: exit 0').to.equal(0);
  }

  before(async () => {
    [orchKey, rsa, other] = await Promise.all([signingKey('orch-1'), signingKey('rsa-1', 'RS256'), signingKey('other-1', 'ES256')]);
    [orchJwks, jwks, otherJwks] = await Promise.all([startJwksServer([orchKey]), startJwksServer([rsa]), startJwksServer([other])]);
    app = await startHttpApp('httpbin');
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'mesh-authz-sim-'));
    fs.mkdirSync(path.join(dir, 'config'));
    const services = [
      workloadServiceYaml({ namespace: 'foo', name: 'httpbin', address: SERVER_IP, ports: [`{ number: ${PORT}, name: http, protocol: HTTP, targetPort: ${app.port} }`] }),
      workloadServiceYaml({ namespace: 'foo', name: 'open', address: OPEN_IP, ports: [`{ number: ${PORT}, name: http, protocol: HTTP, targetPort: ${app.port} }`] }),
    ];
    // No outbound listeners: two proxies on one machine would both bind 127.0.0.1:<service port>.
    const noEgress = 'apiVersion: networking.mesh.io/v1\nkind: Sidecar\nmetadata: { name: default, namespace: foo }\nspec: { egress: [{ hosts: ["mesh-system/*"] }] }\n';
    fs.writeFileSync(path.join(dir, 'config', 'services.yaml'), [...services, noEgress].join('\n---\n'));
    fs.writeFileSync(path.join(dir, 'config', 'policies.yaml'), POLICIES.replace('@JWKS@', jwks.url).replace('@OTHER_JWKS@', otherJwks.url));
    daemon = await startDaemon(['--configDir', path.join(dir, 'config')], {
      PILOT_DEBOUNCE_AFTER: '10ms',
      PILOT_DEBOUNCE_MAX: '100ms',
      JWT_RULE: JSON.stringify({ issuer: ORCH_ISSUER, jwksUri: orchJwks.url }),
    });
    const rootPath = path.join(daemon.workDir, 'var', 'run', 'secrets', 'mesh', 'root-cert.pem');
    root = daemon.rootCertPem();
    const [server, open] = await Promise.all([
      startAgent({
        grpcPort: daemon.grpcPort, instanceIp: SERVER_IP, namespace: 'foo', labels: { app: 'httpbin', version: 'v1' },
        secure: { secureGrpcPort: daemon.secureGrpcPort, rootCertPath: rootPath, token: await saToken('foo', 'httpbin') },
      }),
      startAgent({ grpcPort: daemon.grpcPort, instanceIp: OPEN_IP, namespace: 'foo', labels: { app: 'open', version: 'v1' } }),
    ]);
    agents.push(server, open);
    await Promise.all(agents.map((a) => a.waitForLog(/built-in proxy ready/, 20_000)));
    const Client = caClientConstructor();
    ca = new Client(`127.0.0.1:${daemon.secureGrpcPort}`, grpc.credentials.createSsl(Buffer.from(root)), {
      'grpc.ssl_target_name_override': 'meshd.mesh-system.svc',
      'grpc.default_authority': 'meshd.mesh-system.svc',
    });
  });

  after(async () => {
    ca?.close();
    for (const a of agents) await a.stop();
    await daemon?.stop();
    await Promise.all([app?.close(), jwks?.close(), otherJwks?.close(), orchJwks?.close()]);
    if (dir) fs.rmSync(dir, { recursive: true, force: true });
  });

  it('gives the proxy\'s answer and the deciding rule for every request of a 60-request matrix', async () => {
    const t = (sub: string, claims: Record<string, unknown> = {}, o: { aud?: string; expiresIn?: number; iss?: string; key?: SigningKey } = {}) =>
      token(o.key ?? rsa, { iss: o.iss ?? ISS, sub, aud: o.aud ?? 'httpbin', expiresIn: o.expiresIn, claims });
    const bad = (jwt: string) => jwt.slice(0, -6) + 'AAAAAA';
    const stranger = await signingKey('rsa-1', 'RS256'); // same kid, another key: bad signature
    const unknownKid = await signingKey('nobody', 'RS256');
    const carol = (claims: Record<string, unknown> = {}) => token(other, { iss: OTHER_ISS, sub: 'carol', claims });
    const allow = (n: number) => `allow-api.foo rule ${n}`;
    const deny = (n: number) => `deny-admin.foo rule ${n}`;
    const alice = await t('alice', { groups: ['dev', 'admins'] });
    const cases: Case[] = [
      // spec/01 RequestAuthentication behaviours, on the workload no AuthorizationPolicy selects.
      { name: 'ra2-open-no-token', open: true, path: '/get', status: 200, rule: 'none' },
      { name: 'ra2-open-valid-token', open: true, path: '/get', token: await t('bob'), status: 200, rule: 'none' },
      { name: 'ra1-open-bad-signature', open: true, path: '/get', token: bad(await t('bob')), status: 401, rule: 'none' },
      { name: 'ra1-open-expired', open: true, path: '/get', token: await t('bob', {}, { expiresIn: -600 }), status: 401, rule: 'none' },
      { name: 'ra1-open-wrong-issuer', open: true, path: '/get', token: await t('bob', {}, { iss: 'https://evil.example.com' }), status: 401, rule: 'none' },
      { name: 'ra1-open-wrong-audience', open: true, path: '/get', token: await t('bob', {}, { aud: 'elsewhere' }), status: 401, rule: 'none' },
      { name: 'ra1-open-other-key-same-kid', open: true, path: '/get', token: await t('bob', {}, { key: stranger }), status: 401, rule: 'none' },
      { name: 'ra1-open-unknown-kid', open: true, path: '/get', token: await t('bob', {}, { key: unknownKid }), status: 401, rule: 'none' },
      { name: 'ra1-open-malformed', open: true, path: '/get', token: 'not-a-jwt', status: 401, rule: 'none' },
      { name: 'ra1-open-custom-header-bad', open: true, path: '/get', headers: { 'x-jwt-assertion': bad(await carol()) }, status: 401, rule: 'none' },
      { name: 'ra1-invalid-token-before-rbac', path: '/get', token: bad(alice), status: 401, rule: 'none' },
      // spec/01 AuthorizationPolicy behaviours.
      { name: 'ap1-no-token', path: '/data', status: 403, rule: 'none' },
      { name: 'ap1-unlisted-principal', path: '/data', token: await t('mallory', { groups: ['admins'] }), status: 403, rule: 'none' },
      { name: 'ap2-listed-principal-and-claim', path: '/data', token: alice, status: 200, rule: allow(1) },
      { name: 'ap3-string-claim', path: '/data', token: await t('alice', { groups: 'admins' }), status: 200, rule: allow(1) },
      { name: 'ap3-list-claim-without-value', path: '/data', token: await t('alice', { groups: ['dev'] }), status: 403, rule: 'none' },
      { name: 'ap4-claim-missing', path: '/data', token: await t('alice'), status: 403, rule: 'none' },
      { name: 'ap2-second-issuer-custom-header', path: '/data', headers: { 'x-jwt-assertion': await carol({ groups: ['admins'] }) }, status: 200, rule: allow(1) },
      { name: 'ap3-scope-list-claim', path: '/data', headers: { 'x-jwt-assertion': await carol({ scope: ['write:items', 'read:items'] }) }, status: 200, rule: allow(7) },
      { name: 'ap3-scope-space-delimited', path: '/data', headers: { 'x-jwt-assertion': await carol({ scope: 'write:items read:items' }) }, status: 200, rule: allow(7) },
      { name: 'ap3-scope-without-value', path: '/data', headers: { 'x-jwt-assertion': await carol({ scope: ['write:items'] }) }, status: 403, rule: 'none' },
      // Nested claims.
      { name: 'nested-claim', path: '/data', token: await t('zed', { org: { team: 'platform' } }), status: 200, rule: allow(4) },
      { name: 'nested-claim-other-value', path: '/data', token: await t('zed', { org: { team: 'sales' } }), status: 403, rule: 'none' },
      { name: 'nested-claim-not-nested', path: '/data', token: await t('zed', { team: 'platform' }), status: 403, rule: 'none' },
      // Path templates and methods.
      { name: 'template-one-segment', path: '/api/v1/items', status: 200, rule: allow(0) },
      { name: 'template-two-segments', path: '/api/v1/x/items', status: 403, rule: 'none' },
      { name: 'template-wrong-method', path: '/api/v1/items', method: 'POST', status: 403, rule: 'none', audit: 'audit-writes.foo rule 0' },
      { name: 'template-other-suffix', path: '/api/v1/things', status: 403, rule: 'none' },
      { name: 'suffix-json', path: '/reports/q1.json', status: 200, rule: allow(5) },
      { name: 'suffix-json-head', path: '/reports/q1.json', method: 'HEAD', status: 403, rule: 'none' },
      { name: 'suffix-not-json', path: '/reports/q1.xml', status: 403, rule: 'none' },
      { name: 'query-ignored-by-template', path: '/api/v2/items?page=2', status: 200, rule: allow(0) },
      // DENY over ALLOW.
      { name: 'deny-prefix-over-allow-principal', path: '/admin/users', token: alice, status: 403, rule: deny(0) },
      { name: 'deny-prefix-bare', path: '/admin', status: 403, rule: deny(0) },
      { name: 'deny-prefix-over-json', path: '/admin/x.json', status: 403, rule: deny(0) },
      { name: 'deny-prefix-is-a-string-prefix', path: '/administrator.json', status: 403, rule: deny(0) },
      { name: 'deny-delete-plain-text', path: '/api/v1/items', method: 'DELETE', status: 403, rule: deny(2) },
      { name: 'deny-delete-from-frontend', path: '/shop/cart', method: 'DELETE', identity: 'frontend/buyer', status: 403, rule: deny(2), dryRun: 'dry-deny-shop.foo rule 0' },
      { name: 'delete-from-ops-not-denied', path: '/anything', method: 'DELETE', identity: 'ops/bot', status: 200, rule: allow(3) },
      // ipBlocks.
      { name: 'deny-ip-block', path: '/api/v1/items', sourceIp: '127.0.0.66', status: 403, rule: deny(1) },
      { name: 'deny-ip-block-over-token', path: '/data', token: alice, sourceIp: '127.0.0.66', status: 403, rule: deny(1) },
      { name: 'allow-ip-block-internal', path: '/internal/metrics', sourceIp: '127.0.0.83', status: 200, rule: allow(6) },
      { name: 'allow-ip-block-outside', path: '/internal/metrics', sourceIp: '127.0.0.88', status: 403, rule: 'none' },
      { name: 'allow-ip-block-wrong-path', path: '/external', sourceIp: '127.0.0.83', status: 403, rule: 'none' },
      // Principals and namespaces (mutual TLS with certificates from the CA).
      { name: 'principal-shop-get', path: '/shop/cart', identity: 'frontend/buyer', status: 200, rule: allow(2), dryRun: 'dry-deny-shop.foo rule 0' },
      { name: 'principal-shop-post', path: '/shop/cart', method: 'POST', identity: 'frontend/buyer', status: 200, rule: allow(2), audit: 'audit-writes.foo rule 0', dryRun: 'dry-deny-shop.foo rule 0' },
      { name: 'principal-shop-put', path: '/shop/cart', method: 'PUT', identity: 'frontend/buyer', status: 403, rule: 'none', audit: 'audit-writes.foo rule 0', dryRun: 'dry-deny-shop.foo rule 0' },
      { name: 'principal-other-sa', path: '/shop/cart', identity: 'frontend/snoop', status: 403, rule: 'none', dryRun: 'dry-deny-shop.foo rule 0' },
      { name: 'principal-plain-text', path: '/shop/cart', status: 403, rule: 'none', dryRun: 'dry-deny-shop.foo rule 0' },
      { name: 'principal-wrong-path', path: '/cart', identity: 'frontend/buyer', status: 403, rule: 'none' },
      { name: 'namespace-ops', path: '/anything', identity: 'ops/bot', status: 200, rule: allow(3) },
      { name: 'namespace-ops-other-sa', path: '/anything', method: 'PUT', identity: 'ops/deployer', status: 200, rule: allow(3), audit: 'audit-writes.foo rule 0' },
      { name: 'namespace-other', path: '/anything', identity: 'dev/bot', status: 403, rule: 'none' },
      { name: 'namespace-ops-denied-admin', path: '/admin', identity: 'ops/bot', status: 403, rule: deny(0) },
      { name: 'mtls-with-token', path: '/data', identity: 'dev/bot', token: alice, status: 200, rule: allow(1) },
      // Hosts and ports.
      { name: 'host-and-port', path: '/host-only', host: 'api.example.com', status: 200, rule: allow(8) },
      { name: 'host-case-insensitive', path: '/host-only', host: 'API.Example.com', status: 200, rule: allow(8) },
      { name: 'host-other', path: '/host-only', status: 403, rule: 'none' },
      // AUDIT changes nothing; dry-run rules are reported, never enforced.
      { name: 'audit-post-allowed', path: '/data', method: 'POST', token: alice, status: 200, rule: allow(1), audit: 'audit-writes.foo rule 0' },
      { name: 'dry-run-deny-not-enforced', path: '/shop/items.json', status: 200, rule: allow(5), dryRun: 'dry-deny-shop.foo rule 0' },
    ];
    expect(cases.length).to.be.at.least(50);
    await compare(cases, path.join(dir, 'requests.yaml'));
  });

  it('follows a policy updated under the same name (spec/01 AuthorizationPolicy 5): the proxy and the simulator agree again', async () => {
    const bob = await token(rsa, { iss: ISS, sub: 'bob', aud: 'httpbin' });
    const alice = await token(rsa, { iss: ISS, sub: 'alice', aud: 'httpbin', claims: { groups: ['admins'] } });
    const file = path.join(dir, 'config', 'policies.yaml');
    const replaced = fs.readFileSync(file, 'utf8').replace(/kind: AuthorizationPolicy\nmetadata: \{ name: allow-api[\s\S]*?\n---/, `kind: AuthorizationPolicy
metadata: { name: allow-api, namespace: foo }
spec:
  selector: { matchLabels: { app: httpbin } }
  rules: [{ from: [{ source: { requestPrincipals: ["${ISS}/bob"] } }] }]
---`);
    fs.writeFileSync(file, replaced);
    expect(await eventually(() => send({ name: 'bob', path: '/data', token: bob, status: 200, rule: '' }), 200, 5000)).to.equal(200);
    await compare(
      [
        { name: 'updated-rule-allows-bob', path: '/data', token: bob, status: 200, rule: 'allow-api.foo rule 0' },
        { name: 'old-rule-gone', path: '/data', token: alice, status: 403, rule: 'none' },
        { name: 'deny-still-first', path: '/admin', token: bob, status: 403, rule: 'deny-admin.foo rule 0' },
      ],
      path.join(dir, 'requests-updated.yaml'),
    );
  });
});
