/**
 * Issue acceptance (issue 14, paths that cannot sneak past policy): the bypass matrix. The real
 * daemon generates the config (HTTP connection managers with the default path normalization,
 * BASE: normalize_path, escaped slashes kept, slashes not merged), agents run the built-in
 * proxy, and raw HTTP/1.1 request lines (nothing client-side normalizes them) go to workloads
 * under three kinds of AuthorizationPolicy:
 *
 * - allow:    ALLOW `/public/*` for anyone, `/admin/*` only for the requestPrincipal ISS/admin;
 * - deny:     DENY `/secret*` (everything else allowed);
 * - template: ALLOW `/api/{*}/docs`, `/static/{**}` and `*.png`.
 *
 * Every path form gets exactly the answer its policy gives the NORMALIZED path, computed here
 * from a hand-written table of normalized forms (not by the implementation), and the app
 * receives the normalized path, query untouched, or nothing at all.
 */
import { expect } from 'chai';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { RunningAgent, startAgent } from '../../helpers/agent';
import { RunningDaemon, startDaemon } from '../../helpers/daemon';
import { HttpApp, startHttpApp } from '../../helpers/http-apps';
import { eventually, JwksServer, SigningKey, signingKey, startJwksServer, token } from '../../helpers/jwt';
import { workloadServiceYaml } from '../../helpers/push';
import { rawRequest } from '../../helpers/raw-http';
import { usesSharedLoopbackNetwork } from '../../helpers/shared-network';

usesSharedLoopbackNetwork();

const ISS = 'https://issuer.example.com';
const REJECTED = 400;

type Policy = 'allow' | 'deny' | 'template' | 'unsafe';
const WORKLOAD_IP: Record<Policy, string> = { allow: '127.0.0.141', deny: '127.0.0.142', template: '127.0.0.143', unsafe: '127.0.0.144' };

/**
 * Each raw request target and the path Envoy's BASE normalization makes of it (400: rejected
 * before any filter). Written out by hand from the rules: fragment cut; `.`/`..` segments
 * (also as %2e/%2E, also with `;params`) resolved, never above the root; backslash = slash;
 * %XX of unreserved characters decoded, other escapes kept as written; `//` kept; query kept.
 */
const MATRIX: Array<[string, string | typeof REJECTED]> = [
  // dot segments
  ['/public/../admin/x', '/admin/x'],
  ['/public/./x', '/public/x'],
  ['/./secret', '/secret'],
  ['/x/../secret', '/secret'],
  ['/public/x/../../admin/y', '/admin/y'],
  ['/../../secret', '/secret'],
  ['/.%2e/secret', '/secret'],
  ['/public/...', '/public/...'],
  ['/public/..../admin', '/public/..../admin'],
  // trailing dot segments
  ['/public/..', '/'],
  ['/public/.', '/public/'],
  ['/secret/x/..', '/secret/'],
  ['/admin/x/./', '/admin/x/'],
  // encoded dots, both cases
  ['/public/%2e%2e/admin/x', '/admin/x'],
  ['/public/%2E%2E/admin/x', '/admin/x'],
  ['/public/.%2e/admin/x', '/admin/x'],
  ['/public/%2E./admin/x', '/admin/x'],
  ['/%2e/secret', '/secret'],
  ['/%2e%2e/%2e%2e/secret', '/secret'],
  ['/public/%2e%2e', '/'],
  // encoded slashes and backslashes: kept as written (KEEP_UNCHANGED), so they separate nothing.
  // `/public/..%2fadmin/x` is therefore under /public/ and allowed, and the app receives the
  // escaped slash verbatim: an app that decodes %2F before resolving `..` would land on /admin,
  // which is why the incumbent offers DECODE_AND_MERGE_SLASHES (UNESCAPE_AND_FORWARD).
  ['/public/..%2fadmin/x', '/public/..%2fadmin/x'],
  ['/public/..%2Fadmin/x', '/public/..%2Fadmin/x'],
  ['/public/%2e%2e%2fadmin/x', '/public/..%2fadmin/x'],
  ['/public%2f..%2fsecret', '/public%2f..%2fsecret'],
  ['/secret%2fx', '/secret%2fx'],
  ['/public/..%5cadmin/x', '/public/..%5cadmin/x'],
  ['/secret%5C', '/secret%5C'],
  ['/api/a%2Fb/docs', '/api/a%2Fb/docs'],
  // double encoding is decoded at most once (%25 is not unreserved: not at all)
  ['/public/%252e%252e/admin/x', '/public/%252e%252e/admin/x'],
  ['/%2573ecret', '/%2573ecret'],
  // encoded unreserved characters
  ['/%73ecret', '/secret'],
  ['/%73%65%63%72%65%74/x', '/secret/x'],
  ['/%70ublic/x', '/public/x'],
  ['/%61dmin/x', '/admin/x'],
  ['/api/%76%31/docs', '/api/v1/docs'],
  // case: kept (paths are case-sensitive), only hex digits of kept escapes may be either case
  ['/SECRET', '/SECRET'],
  ['/%53ECRET', '/SECRET'],
  ['/Public/x', '/Public/x'],
  // `;` path parameters: kept, except on dot segments, where they would hide a `..`
  ['/secret;x=1', '/secret;x=1'],
  ['/public/..;/admin/x', '/admin/x'],
  ['/public/.;p=1/x', '/public/x'],
  ['/admin;/x', '/admin;/x'],
  ['/public/x;jsessionid=1', '/public/x;jsessionid=1'],
  // backslash is a slash
  ['/public\\..\\admin\\x', '/admin/x'],
  ['/x\\..\\secret', '/secret'],
  // fragment: cut before anything reads the path
  ['/secret#x', '/secret'],
  ['/public/x#/../../admin/x', '/public/x'],
  ['/admin/x#frag', '/admin/x'],
  ['/static/a.png#top', '/static/a.png'],
  ['/public/x?q=1#frag', '/public/x?q=1'],
  // query: never normalized
  ['/public/x?next=/../admin', '/public/x?next=/../admin'],
  ['/secret?x=1', '/secret?x=1'],
  ['/x/../secret?a=%2e%2e/', '/secret?a=%2e%2e/'],
  ['/public/x?%73=1', '/public/x?%73=1'],
  // `//`: not merged by default (BASE), so `//secret` is not under /secret (MERGE_SLASHES would merge it)
  ['//secret', '//secret'],
  ['/public//x', '/public//x'],
  ['//public/x', '//public/x'],
  ['/x//../secret', '/x/secret'],
  // URI template paths
  ['/api/v1/docs', '/api/v1/docs'],
  ['/api/v1/../v2/docs', '/api/v2/docs'],
  ['/api/v1/x/../docs', '/api/v1/docs'],
  ['/api/v1/v2/docs', '/api/v1/v2/docs'],
  ['/static/../secret', '/secret'],
  ['/static/a/b/c.js', '/static/a/b/c.js'],
  ['/img/../logo.png', '/logo.png'],
  // absolute-form request target: its path is what counts
  ['http://workload.example.com/x/../secret', '/secret'],
  // a NUL, raw or encoded, makes the path invalid
  ['/public/%00', REJECTED],
  ['/secret%00/../public/x', REJECTED],
];

/** What each policy answers for a normalized path (without its query). */
function decision(policy: Policy, pathOnly: string, admin: boolean): 200 | 403 {
  switch (policy) {
    case 'allow':
      return pathOnly.startsWith('/public/') || (admin && pathOnly.startsWith('/admin/')) ? 200 : 403;
    case 'deny':
      return pathOnly.startsWith('/secret') ? 403 : 200;
    case 'template':
      return /^\/api\/[^/]+\/docs$/.test(pathOnly) || pathOnly.startsWith('/static/') || pathOnly.endsWith('.png') ? 200 : 403;
    case 'unsafe':
      return pathOnly === '/secret' ? 403 : 200;
  }
}

function policiesYaml(jwksUri: string): string {
  const authz = (name: string, action: string, rules: string) => `
---
apiVersion: security.mesh.io/v1
kind: AuthorizationPolicy
metadata: { name: ${name}, namespace: foo }
spec:
  selector: { matchLabels: { app: ${name} } }
  action: ${action}
  rules:
${rules}`;
  return `
apiVersion: security.mesh.io/v1
kind: RequestAuthentication
metadata: { name: allow-jwt, namespace: foo }
spec:
  selector: { matchLabels: { app: allow } }
  jwtRules: [{ issuer: "${ISS}", jwksUri: "${jwksUri}" }]
${authz(
  'allow',
  'ALLOW',
  `  - to: [{ operation: { paths: ["/public/*"] } }]
  - from: [{ source: { requestPrincipals: ["${ISS}/admin"] } }]
    to: [{ operation: { paths: ["/admin/*"] } }]`,
)}
${authz('deny', 'DENY', '  - to: [{ operation: { paths: ["/secret*"] } }]')}
${authz('template', 'ALLOW', '  - to: [{ operation: { paths: ["/api/{*}/docs", "/static/{**}", "*.png"] } }]')}
${authz('unsafe', 'DENY', '  - to: [{ operation: { paths: ["/secret"] } }]')}
`;
}

describe('path normalization against AuthorizationPolicy, end to end through the built-in proxy (bypass matrix)', function () {
  this.timeout(120_000);
  let dir: string;
  let app: HttpApp;
  let admin: SigningKey;
  let jwks: JwksServer;
  let daemon: RunningDaemon;
  const agents = new Map<Policy, RunningAgent>();
  let adminToken: string;

  before(async () => {
    app = await startHttpApp('app');
    admin = await signingKey('admin-key');
    jwks = await startJwksServer([admin]);
    adminToken = await token(admin, { iss: ISS, sub: 'admin' });
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'mesh-paths-'));
    const services = (Object.keys(WORKLOAD_IP) as Policy[]).map((name) =>
      workloadServiceYaml({ namespace: 'foo', name, address: WORKLOAD_IP[name], ports: [`{ number: 8000, name: http, protocol: HTTP, targetPort: ${app.port} }`] }),
    );
    // No outbound listeners: four agents on one host would all bind 127.0.0.1:8000.
    const noEgress = `apiVersion: networking.mesh.io/v1
kind: Sidecar
metadata: { name: default, namespace: foo }
spec: { egress: [{ hosts: ["mesh-system/*"] }] }
`;
    fs.writeFileSync(path.join(dir, 'services.yaml'), [...services, noEgress].join('\n---\n'));
    fs.writeFileSync(path.join(dir, 'policies.yaml'), policiesYaml(jwks.url));
    daemon = await startDaemon(['--configDir', dir], { PILOT_DEBOUNCE_AFTER: '10ms', PILOT_DEBOUNCE_MAX: '100ms' });
    await Promise.all(
      (Object.keys(WORKLOAD_IP) as Policy[]).map(async (name) => {
        const env: Record<string, string> = name === 'unsafe' ? { HTTP_STRIP_FRAGMENT_FROM_PATH_UNSAFE_IF_DISABLED: 'false' } : {};
        const agent = await startAgent({ grpcPort: daemon.grpcPort, instanceIp: WORKLOAD_IP[name], namespace: 'foo', labels: { app: name, version: 'v1' }, env });
        agents.set(name, agent);
        await agent.waitForLog(/built-in proxy ready/, 20_000);
      }),
    );
    // The policies are in force once the plain forms get their answers.
    expect(await eventually(async () => (await send('deny', '/secret')).status, 403, 10_000)).to.equal(403);
    expect(await eventually(async () => (await send('allow', '/admin/x')).status, 403, 10_000)).to.equal(403);
    expect(await eventually(async () => (await send('template', '/other')).status, 403, 10_000)).to.equal(403);
  });

  after(async () => {
    for (const agent of agents.values()) await agent.stop();
    await daemon?.stop();
    await jwks?.close();
    await app?.close();
    if (dir) fs.rmSync(dir, { recursive: true, force: true });
  });

  function send(policy: Policy, target: string, headers: Record<string, string> = {}) {
    return rawRequest(WORKLOAD_IP[policy], 8000, target, { host: `${policy}.foo.svc.cluster.local`, ...headers });
  }

  /** Sends `target`; checks the status against the policy's answer for `normalized` and what the app received. */
  async function check(policy: Policy, target: string, normalized: string | typeof REJECTED, admin = false): Promise<string | undefined> {
    const seen = app.requests.length;
    const answer = await send(policy, target, admin ? { authorization: `Bearer ${adminToken}` } : {});
    const expected = normalized === REJECTED ? REJECTED : decision(policy, normalized.split('?')[0], admin);
    const received = app.requests.slice(seen).map((r) => r.url);
    const what = `${policy}${admin ? ' (admin token)' : ''}: GET ${target}`;
    if (answer.status !== expected) return `${what}: status ${answer.status}, expected ${expected} (normalized ${normalized})`;
    if (expected === 200) {
      if (received.length !== 1 || received[0] !== normalized) return `${what}: the app received ${JSON.stringify(received)}, expected [${JSON.stringify(normalized)}]`;
      if (answer.body !== `app GET ${normalized}`) return `${what}: answered ${JSON.stringify(answer.body)}`;
    } else if (received.length > 0) {
      return `${what}: ${expected} but the app received ${JSON.stringify(received)}`;
    }
    return undefined;
  }

  it(`holds at least 40 path forms of every kind the issue names`, () => {
    expect(MATRIX.length).to.be.at.least(40);
    const targets = MATRIX.map(([target]) => target);
    for (const example of ['/public/../admin/x', '/public/%2e%2e/admin/x', '/public/..%2fadmin/x', '/./secret', '/x/../secret', '/%73ecret']) expect(targets).to.include(example);
    for (const form of [/%2e/, /%2E/, /%2f/, /%2F/, /%25/, /;/, /\\/, /%5c/i, /#/, /\?/, /\/\//, /\/\.\.?$/]) expect(targets.some((t) => form.test(t)), String(form)).to.equal(true);
  });

  for (const policy of ['allow', 'deny', 'template'] as const) {
    it(`${policy}: every request gets the answer the policy gives its normalized path, and the app sees that path`, async () => {
      const problems: string[] = [];
      for (const [target, normalized] of MATRIX) {
        const problem = await check(policy, target, normalized);
        if (problem) problems.push(problem);
      }
      expect(problems).to.deep.equal([]);
    });
  }

  it('allow, with the admin token: /admin/* opens only for what normalizes under /admin/', async () => {
    const problems: string[] = [];
    for (const [target, normalized] of MATRIX) {
      const problem = await check('allow', target, normalized, true);
      if (problem) problems.push(problem);
    }
    expect(problems).to.deep.equal([]);
    // Spot checks of the issue's examples, spelled out.
    expect((await send('allow', '/public/../admin/x')).status, 'no token').to.equal(403);
    expect((await send('allow', '/public/%2e%2e/admin/x')).status, 'no token').to.equal(403);
    const mallory = await token(admin, { iss: ISS, sub: 'mallory' });
    expect((await send('allow', '/public/../admin/x', { authorization: `Bearer ${mallory}` })).status, 'another principal').to.equal(403);
    expect((await send('allow', '/public/../admin/x', { authorization: `Bearer ${adminToken}` })).body).to.equal('app GET /admin/x');
  });

  it('with HTTP_STRIP_FRAGMENT_FROM_PATH_UNSAFE_IF_DISABLED=false the fragment is kept (escaped by normalization): the unsafe mode the setting names', async () => {
    expect(await check('unsafe', '/secret', '/secret')).to.equal(undefined);
    // The fragment stays in the path, so the exact DENY on /secret no longer matches.
    expect(await check('unsafe', '/secret#x', '/secret%23x')).to.equal(undefined);
    expect(await check('unsafe', '/./secret', '/secret')).to.equal(undefined);
    expect(await check('deny', '/secret#x', '/secret'), 'the default strips it').to.equal(undefined);
  });
});
