/**
 * Issue acceptance: the daemon generates jwt_authn and RBAC, the agent's built-in proxy
 * enforces them on real HTTP traffic to a real app, tokens signed with jose and served from a
 * real JWKS server. Spec/01 behaviours of RequestAuthentication and AuthorizationPolicy.
 */
import { expect } from 'chai';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { RunningAgent, startAgent } from '../../helpers/agent';
import { RunningDaemon, startDaemon } from '../../helpers/daemon';
import { HttpApp, request, startHttpApp } from '../../helpers/http-apps';
import { workloadServiceYaml } from '../../helpers/push';
import { eventually, JwksServer, SigningKey, signingKey, startJwksServer, token } from '../../helpers/jwt';
import { usesSharedLoopbackNetwork } from '../../helpers/shared-network';

usesSharedLoopbackNetwork();

const ISS = 'https://issuer.example.com';
const OTHER_ISS = 'https://other.example.com';
const HOST = 'httpbin.foo.svc.cluster.local';

/** httpbin in foo on HTTP 8000 (and TCP 8001 with `tcp`), its workload at `ip`, the app at `appPort`. */
function serviceYaml(ip: string, appPort: number, tcp = false): string {
  const ports = [`{ number: 8000, name: http, protocol: HTTP, targetPort: ${appPort} }`];
  if (tcp) ports.push(`{ number: 8001, name: tcp, protocol: TCP, targetPort: ${appPort} }`);
  return workloadServiceYaml({ namespace: 'foo', name: 'httpbin', address: ip, ports });
}

function requestAuthnYaml(jwksUri: string, otherJwksUri: string): string {
  return `
apiVersion: security.mesh.io/v1
kind: RequestAuthentication
metadata: { name: httpbin-jwt, namespace: foo }
spec:
  selector: { matchLabels: { app: httpbin } }
  jwtRules:
    - issuer: "${ISS}"
      jwksUri: "${jwksUri}"
      audiences: ["httpbin", "shop"]
    - issuer: "${OTHER_ISS}"
      jwksUri: "${otherJwksUri}"
      fromHeaders: [{ name: x-jwt-assertion }]
`;
}

function allowYaml(rules: string): string {
  return `
apiVersion: security.mesh.io/v1
kind: AuthorizationPolicy
metadata: { name: httpbin-allow, namespace: foo }
spec:
  selector: { matchLabels: { app: httpbin } }
  action: ALLOW
  rules:
${rules}
`;
}

const ALICE_ADMINS = `    - from: [{ source: { requestPrincipals: ["${ISS}/alice", "${OTHER_ISS}/carol"] } }]
      when: [{ key: "request.auth.claims[groups]", values: ["admins"] }]
    - from: [{ source: { requestPrincipals: ["${ISS}/dave"] } }]
      when: [{ key: "request.auth.claims[role]", values: ["reader"] }]
    - from: [{ source: { requestPrincipals: ["${ISS}/erin"] } }]
      when: [{ key: "request.auth.claims[scope]", values: ["read:items"] }]`;

interface Mesh {
  dir: string;
  daemon: RunningDaemon;
  agent: RunningAgent;
  ip: string;
}

async function startMesh(ip: string, files: Record<string, string>, env: Record<string, string> = {}): Promise<Mesh> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'mesh-jwt-'));
  for (const [name, body] of Object.entries(files)) fs.writeFileSync(path.join(dir, name), body);
  const daemon = await startDaemon(['--configDir', dir], { PILOT_DEBOUNCE_AFTER: '10ms', PILOT_DEBOUNCE_MAX: '100ms', ...env });
  let agent: RunningAgent | undefined;
  try {
    agent = await startAgent({ grpcPort: daemon.grpcPort, instanceIp: ip, namespace: 'foo', labels: { app: 'httpbin', version: 'v1' } });
    await agent.waitForLog(/built-in proxy ready/, 10_000);
  } catch (err) {
    // A mesh that did not start is not left running (its ports would fail the next ones).
    await agent?.stop();
    await daemon.stop();
    throw err;
  }
  return { dir, daemon, agent, ip };
}

async function stopMesh(mesh: Mesh | undefined): Promise<void> {
  if (!mesh) return;
  await mesh.agent.stop();
  await mesh.daemon.stop();
  fs.rmSync(mesh.dir, { recursive: true, force: true });
}

function call(mesh: Mesh, jwt?: string, headers: Record<string, string> = {}) {
  return request(mesh.ip, 8000, '/headers', { host: HOST, ...(jwt ? { authorization: `Bearer ${jwt}` } : {}), ...headers });
}
const statusOf = async (mesh: Mesh, jwt?: string, headers: Record<string, string> = {}) => (await call(mesh, jwt, headers)).status;

describe('JWT authentication and authorization, end to end through the built-in proxy', function () {
  this.timeout(60_000);
  let app: HttpApp;
  let rsa: SigningKey;
  let ec: SigningKey;
  let other: SigningKey;
  let jwks: JwksServer;
  let otherJwks: JwksServer;

  before(async () => {
    app = await startHttpApp('httpbin');
    [rsa, ec, other] = await Promise.all([signingKey('rsa-1', 'RS256'), signingKey('ec-1', 'ES256'), signingKey('other-1', 'RS256')]);
    jwks = await startJwksServer([rsa, ec]);
    otherJwks = await startJwksServer([other]);
  });
  after(async () => {
    await app?.close();
    await jwks?.close();
    await otherJwks?.close();
  });

  describe('the spec behaviours (daemon fetches the keys: PILOT_JWT_ENABLE_REMOTE_JWKS=false)', () => {
    let mesh: Mesh;
    before(async () => {
      mesh = await startMesh('127.0.0.61', { 'svc.yaml': serviceYaml('127.0.0.61', app.port), 'authn.yaml': requestAuthnYaml(jwks.url, otherJwks.url) });
    });
    after(() => stopMesh(mesh));

    it('no token and no authorization policy → 200; a valid token → 200', async () => {
      expect(await statusOf(mesh)).to.equal(200);
      expect(await statusOf(mesh, await token(rsa, { iss: ISS, sub: 'alice', aud: 'httpbin' }))).to.equal(200);
    });

    it('an invalid token → 401 "Jwt verification fails" with a Bearer challenge', async () => {
      const good = await token(rsa, { iss: ISS, sub: 'alice', aud: 'httpbin' });
      const answer = await call(mesh, good.slice(0, -6) + 'AAAAAA');
      expect(answer.status).to.equal(401);
      expect(answer.body).to.equal('Jwt verification fails');
      expect(String(answer.headers['www-authenticate'])).to.match(/^Bearer realm="http:\/\/httpbin\.foo\.svc\.cluster\.local\/headers"/);
    });

    it('expired, wrong issuer, wrong audience, bad signature and unknown kid → 401', async () => {
      const stranger = await signingKey('rsa-1', 'RS256'); // same kid, other key: bad signature
      const unknownKid = await signingKey('nobody', 'RS256');
      expect(await statusOf(mesh, await token(rsa, { iss: ISS, sub: 'alice', aud: 'httpbin', expiresIn: -600 }))).to.equal(401);
      expect(await statusOf(mesh, await token(rsa, { iss: 'https://evil.example.com', sub: 'alice', aud: 'httpbin' }))).to.equal(401);
      expect(await statusOf(mesh, await token(rsa, { iss: ISS, sub: 'alice', aud: 'elsewhere' }))).to.equal(401);
      expect(await statusOf(mesh, await token(stranger, { iss: ISS, sub: 'alice', aud: 'httpbin' }))).to.equal(401);
      expect(await statusOf(mesh, await token(unknownKid, { iss: ISS, sub: 'alice', aud: 'httpbin' }))).to.equal(401);
    });

    it('ES256 keys verify as RS256 ones do', async () => {
      expect(await statusOf(mesh, await token(ec, { iss: ISS, sub: 'alice', aud: 'shop' }))).to.equal(200);
    });

    it('reads the token of a rule from its custom header (fromHeaders)', async () => {
      const carol = await token(other, { iss: OTHER_ISS, sub: 'carol' });
      expect(await statusOf(mesh, undefined, { 'x-jwt-assertion': carol })).to.equal(200);
      expect(await statusOf(mesh, undefined, { 'x-jwt-assertion': carol.slice(0, -6) + 'AAAAAA' })).to.equal(401);
    });

    it('with an ALLOW policy: principals and claims decide between 200 and 403', async () => {
      fs.writeFileSync(path.join(mesh.dir, 'allow.yaml'), allowYaml(ALICE_ADMINS));
      expect(await eventually(() => statusOf(mesh), 403), 'no token, once the policy is in force').to.equal(403);
      const t = (sub: string, claims: Record<string, unknown> = {}) => token(rsa, { iss: ISS, sub, aud: 'httpbin', claims });
      expect(await statusOf(mesh, await t('alice', { groups: ['dev', 'admins'] })), 'listed principal, list claim contains admins').to.equal(200);
      expect(await statusOf(mesh, await t('alice', { groups: 'admins' })), 'string claim equal').to.equal(200);
      expect(await statusOf(mesh, await t('alice', { groups: ['dev'] })), 'list claim without admins').to.equal(403);
      expect(await statusOf(mesh, await t('alice')), 'claim missing').to.equal(403);
      expect(await statusOf(mesh, await t('mallory', { groups: ['admins'] })), 'unlisted principal').to.equal(403);
      expect(await statusOf(mesh, await t('dave', { role: 'reader' })), 'string claim condition').to.equal(200);
      expect(await statusOf(mesh, await t('dave', { role: 'writer' }))).to.equal(403);
      expect(await statusOf(mesh, await t('erin', { scope: ['write:items', 'read:items'] })), 'scope list claim').to.equal(200);
      expect(await statusOf(mesh, await t('erin', { scope: ['write:items'] }))).to.equal(403);
      const carol = await token(other, { iss: OTHER_ISS, sub: 'carol', claims: { groups: ['admins'] } });
      expect(await statusOf(mesh, undefined, { 'x-jwt-assertion': carol }), 'second issuer via custom header').to.equal(200);
      expect(await statusOf(mesh, (await t('alice', { groups: ['admins'] })).slice(0, -6) + 'AAAAAA'), 'invalid token is 401 before RBAC').to.equal(401);
    });

    it('a policy updated under the same name replaces its rules within 2 s, without restarts', async () => {
      const bob = await token(rsa, { iss: ISS, sub: 'bob', aud: 'httpbin' });
      const alice = await token(rsa, { iss: ISS, sub: 'alice', aud: 'httpbin', claims: { groups: ['admins'] } });
      expect(await statusOf(mesh, bob)).to.equal(403);
      fs.writeFileSync(path.join(mesh.dir, 'allow.yaml'), allowYaml(`    - from: [{ source: { requestPrincipals: ["${ISS}/bob"] } }]`));
      expect(await eventually(() => statusOf(mesh, bob), 200, 2000)).to.equal(200);
      expect(await statusOf(mesh, alice), 'the old rule is gone').to.equal(403);
      fs.rmSync(path.join(mesh.dir, 'allow.yaml'));
      expect(await eventually(() => statusOf(mesh), 200, 2000), 'policy removed').to.equal(200);
    });
  });

  describe('network RBAC on a TCP port', () => {
    let mesh: Mesh;
    before(async () => {
      const tcpService = serviceYaml('127.0.0.63', app.port, true);
      mesh = await startMesh('127.0.0.63', { 'svc.yaml': tcpService });
    });
    after(() => stopMesh(mesh));

    const rawHttp = async (from: string): Promise<string> => {
      const net = await import('node:net');
      return new Promise((resolve) => {
        const s = net.connect({ host: '127.0.0.63', port: 8001, localAddress: from }, () => s.write(`GET /raw HTTP/1.1\r\nHost: ${HOST}\r\nConnection: close\r\n\r\n`));
        let data = '';
        s.on('data', (d) => (data += d));
        s.on('close', () => resolve(data));
        s.on('error', () => resolve(data));
      });
    };

    it('closes connections a DENY policy matches, and lets others through', async () => {
      expect(await rawHttp('127.0.0.1')).to.match(/^HTTP\/1.1 200/);
      fs.writeFileSync(
        path.join(mesh.dir, 'deny.yaml'),
        `apiVersion: security.mesh.io/v1
kind: AuthorizationPolicy
metadata: { name: deny-local, namespace: foo }
spec:
  selector: { matchLabels: { app: httpbin } }
  action: DENY
  rules: [{ from: [{ source: { ipBlocks: ["127.0.0.5/32"] } }] }]
`,
      );
      expect(await eventually(async () => (await rawHttp('127.0.0.5')) === '', true, 2000), 'denied source gets a closed connection').to.equal(true);
      expect(await rawHttp('127.0.0.1'), 'another source still passes').to.match(/^HTTP\/1.1 200/);
      expect(await statusOf(mesh), 'the HTTP port is under the same policy, and 127.0.0.1 is not denied').to.equal(200);
    });
  });

  describe('key rotation at the JWKS server', () => {
    let mesh: Mesh;
    let rotating: JwksServer;
    let first: SigningKey;
    let second: SigningKey;
    before(async () => {
      [first, second] = await Promise.all([signingKey('k1'), signingKey('k2')]);
      rotating = await startJwksServer([first]);
      mesh = await startMesh(
        '127.0.0.62',
        { 'svc.yaml': serviceYaml('127.0.0.62', app.port), 'authn.yaml': requestAuthnYaml(rotating.url, otherJwks.url) },
        { PILOT_JWT_PUB_KEY_REFRESH_INTERVAL: '300ms' },
      );
    });
    after(async () => {
      await stopMesh(mesh);
      await rotating?.close();
    });

    it('is picked up after the refresh interval', async () => {
      const byFirst = await token(first, { iss: ISS, sub: 'alice', aud: 'httpbin' });
      const bySecond = await token(second, { iss: ISS, sub: 'alice', aud: 'httpbin' });
      expect(await statusOf(mesh, byFirst)).to.equal(200);
      expect(await statusOf(mesh, bySecond)).to.equal(401);
      rotating.setKeys([second]);
      expect(await eventually(() => statusOf(mesh, bySecond), 200, 5000)).to.equal(200);
      expect(await statusOf(mesh, byFirst)).to.equal(401);
    });
  });

  for (const mode of ['false', 'meshd', 'hybrid', 'true', 'proxy']) {
    describe(`PILOT_JWT_ENABLE_REMOTE_JWKS=${mode}`, () => {
      let mesh: Mesh;
      const ip = `127.0.0.${70 + ['false', 'meshd', 'hybrid', 'true', 'proxy'].indexOf(mode)}`;
      before(async () => {
        mesh = await startMesh(
          ip,
          { 'svc.yaml': serviceYaml(ip, app.port), 'authn.yaml': requestAuthnYaml(jwks.url, 'http://127.0.0.1:1/unreachable.json') },
          { PILOT_JWT_ENABLE_REMOTE_JWKS: mode },
        );
      });
      after(() => stopMesh(mesh));

      it('verifies valid tokens, and fails closed for an issuer whose key set cannot be fetched', async () => {
        expect(await statusOf(mesh, await token(rsa, { iss: ISS, sub: 'alice', aud: 'httpbin' }))).to.equal(200);
        const carol = await token(other, { iss: OTHER_ISS, sub: 'carol' });
        expect(await statusOf(mesh, undefined, { 'x-jwt-assertion': carol })).to.equal(401);
        expect(await statusOf(mesh), 'no token is still let through by authentication alone').to.equal(200);
      });
    });
  }
});
