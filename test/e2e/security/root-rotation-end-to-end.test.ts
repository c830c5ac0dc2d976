/**
 * Issue acceptance (root rotation): with short test lifetimes the daemon's self-signed root is
 * renewed near expiry, the old one stays trusted during the overlap, the agents re-issue their
 * workload certificates under the new root, and mTLS traffic between two built-in proxies
 * never fails meanwhile.
 */
import { expect } from 'chai';
import { X509Certificate } from 'node:crypto';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { RunningAgent, startAgent } from '../../helpers/agent';
import { RunningDaemon, startDaemon } from '../../helpers/daemon';
import { HttpApp, request, startHttpApp } from '../../helpers/http-apps';
import { shopMeshYaml } from '../../helpers/mtls-mesh';
import { startJwksServer, JwksServer, signingKey, token } from '../../helpers/jwt';
import { usesSharedLoopbackNetwork } from '../../helpers/shared-network';

usesSharedLoopbackNetwork();

const ISSUER = 'https://orch.test';
const SERVER_IP = '127.0.0.91';
const CLIENT_BIND = '127.0.0.92';

const NAMESPACE_STRICT = `apiVersion: security.mesh.io/v1
kind: PeerAuthentication
metadata: { name: default, namespace: backend }
spec: { mtls: { mode: STRICT } }`;

const pems = (text: string) => (text.match(/-----BEGIN CERTIFICATE-----[\s\S]+?-----END CERTIFICATE-----/g) ?? []).map((p) => new X509Certificate(p));
const rootsIn = (pemFile: string) => (fs.readFileSync(pemFile, 'utf8').match(/BEGIN CERTIFICATE/g) ?? []).length;

describe('root rotation with short lifetimes (end to end)', function () {
  this.timeout(90_000);
  let jwks: JwksServer;
  let daemon: RunningDaemon;
  let app: HttpApp;
  const agents: RunningAgent[] = [];

  after(async () => {
    for (const a of agents) await a.stop();
    await daemon?.stop();
    await app?.close();
    await jwks?.close();
  });

  it('issues a new root, re-issues workload certificates under it, and no request fails during the overlap', async () => {
    const key = await signingKey('orch-1');
    jwks = await startJwksServer([key]);
    app = await startHttpApp('shop');
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'mesh-rotation-'));
    fs.writeFileSync(path.join(dir, 'mesh.yaml'), shopMeshYaml({ port: app.port, serverIp: SERVER_IP, clientBind: CLIENT_BIND, policies: NAMESPACE_STRICT }));
    daemon = await startDaemon(['--configDir', dir], {
      PILOT_DEBOUNCE_AFTER: '10ms',
      JWT_RULE: JSON.stringify({ issuer: ISSUER, jwksUri: jwks.url }),
      // A 20 s root, checked every second, renewed when less than 60 % of its life is left: 8 s
      // after start, so a slow start (a fresh CI machine) still leaves traffic flowing before the switch.
      CA_SELF_SIGNED_CA_CERT_TTL: '20s',
      CA_SELF_SIGNED_ROOT_CERT_CHECK_INTERVAL: '1s',
      CA_SELF_SIGNED_ROOT_CERT_GRACE_PERIOD_PERCENTILE: '60',
      CA_ENABLE_JITTER_FOR_ROOT_CERT_ROTATOR: 'false',
    });
    const rootPath = path.join(daemon.workDir, 'var', 'run', 'secrets', 'mesh', 'root-cert.pem');
    const firstRoot = new X509Certificate(fs.readFileSync(rootPath));
    const agent = async (ns: string, sa: string, ip: string, labels: Record<string, string>) => {
      const a = await startAgent({
        grpcPort: daemon.grpcPort,
        instanceIp: ip,
        namespace: ns,
        labels,
        secure: { secureGrpcPort: daemon.secureGrpcPort, rootCertPath: rootPath, token: await token(key, { iss: ISSUER, sub: `system:serviceaccount:${ns}:${sa}`, aud: 'mesh-ca' }) },
      });
      agents.push(a);
      await a.waitForLog(/built-in proxy ready/, 15_000);
      return a;
    };
    const server = await agent('backend', 'shop', SERVER_IP, { app: 'shop', 'security.mesh.io/tlsMode': 'mesh' });
    await agent('frontend', 'buyer', '127.0.0.93', { app: 'buyer' });

    const statuses: number[] = [];
    const call = async () => {
      try {
        statuses.push((await request(CLIENT_BIND, app.port, '/get', { host: 'shop.backend.svc.cluster.local' })).status);
      } catch (err) {
        statuses.push(-1);
      }
    };
    // Wait for the first 200 (config converging), then every request must succeed.
    const convergeBy = Date.now() + 10_000;
    while (statuses.at(-1) !== 200 && Date.now() < convergeBy) {
      await call();
      await new Promise((r) => setTimeout(r, 100));
    }
    expect(statuses.at(-1), 'mTLS traffic before the rotation').to.equal(200);
    statuses.length = 0;

    const serverCerts = path.join(server.workDir, 'certs');
    const rotatedBy = Date.now() + 30_000;
    let rotated = false;
    while (Date.now() < rotatedBy && !rotated) {
      await call();
      const bundleHasTwoRoots = rootsIn(rootPath) >= 2;
      const newest = pems(fs.readFileSync(rootPath, 'utf8'))[0];
      const chainRoot = pems(fs.readFileSync(path.join(serverCerts, 'cert-chain.pem'), 'utf8')).at(-1)!;
      rotated = bundleHasTwoRoots && newest.serialNumber !== firstRoot.serialNumber && chainRoot.serialNumber === newest.serialNumber;
      await new Promise((r) => setTimeout(r, 100));
    }
    expect(rotated, `the root was rotated and the server re-issued; daemon log:\n${daemon.output().slice(-2000)}`).to.equal(true);
    expect(daemon.output()).to.match(/rotated the self-signed root/);
    expect(server.output()).to.match(/mesh roots .* changed: renewing the workload certificate/);
    // Traffic goes on after the switch too.
    for (let i = 0; i < 10; i++) {
      await call();
      await new Promise((r) => setTimeout(r, 100));
    }
    expect(statuses.length).to.be.greaterThan(20);
    expect(statuses.filter((s) => s !== 200), `statuses during the rotation: ${statuses.join(',')}`).to.deep.equal([]);
  });
});
