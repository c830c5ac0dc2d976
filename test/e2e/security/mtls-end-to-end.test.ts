/**
 * Issue acceptance (mutual TLS): agents get workload certificates from the daemon's CA with
 * their orchestrator token, talk xDS to the daemon over mutual TLS, and their built-in proxies
 * do STRICT mTLS between workloads; a plaintext client is refused and a `principals` rule
 * gates by the caller's certificate identity. Real processes, real TLS, real tokens.
 */
import { expect } from 'chai';
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as net from 'node:net';
import * as os from 'node:os';
import * as path from 'node:path';
import * as grpc from '@grpc/grpc-js';
import { TypeUrl } from '../../../src/modules/envoy/type-urls';
import { sidecarNode, SotwClient } from '../../helpers/ads-client';
import { RunningAgent, startAgent } from '../../helpers/agent';
import { RunningDaemon, startDaemon } from '../../helpers/daemon';
import { HttpApp, request, startHttpApp } from '../../helpers/http-apps';
import { shopMeshYaml } from '../../helpers/mtls-mesh';
import { eventually, JwksServer, SigningKey, signingKey, startJwksServer, token } from '../../helpers/jwt';
import { usesSharedLoopbackNetwork } from '../../helpers/shared-network';

usesSharedLoopbackNetwork();

const ORCH_ISSUER = 'https://orch.test';
const SERVER_IP = '127.0.0.61';
/** Where the clients' outbound listener binds (a Sidecar egress bind), away from the app on 127.0.0.1. */
const CLIENT_BIND = '127.0.0.70';

const POLICIES = `apiVersion: security.mesh.io/v1
kind: PeerAuthentication
metadata: { name: shop-strict, namespace: backend }
spec:
  selector: { matchLabels: { app: shop } }
  mtls: { mode: STRICT }
---
apiVersion: security.mesh.io/v1
kind: AuthorizationPolicy
metadata: { name: shop-callers, namespace: backend }
spec:
  selector: { matchLabels: { app: shop } }
  action: ALLOW
  rules:
    - from: [{ source: { principals: ["cluster.local/ns/frontend/sa/buyer"] } }]`;

describe('mutual TLS between workloads, with certificates from the mesh CA (end to end)', function () {
  this.timeout(60_000);
  let dir: string;
  let key: SigningKey;
  let jwks: JwksServer;
  let daemon: RunningDaemon;
  let app: HttpApp;
  let server: RunningAgent;
  const agents: RunningAgent[] = [];

  const saToken = (ns: string, sa: string) => token(key, { iss: ORCH_ISSUER, sub: `system:serviceaccount:${ns}:${sa}`, aud: 'mesh-ca' });
  const rootPath = () => path.join(daemon.workDir, 'var', 'run', 'secrets', 'mesh', 'root-cert.pem');

  async function client(sa: string, ip: string): Promise<RunningAgent> {
    const agent = await startAgent({
      grpcPort: daemon.grpcPort,
      instanceIp: ip,
      namespace: 'frontend',
      labels: { app: sa, 'security.mesh.io/tlsMode': 'mesh' },
      secure: { secureGrpcPort: daemon.secureGrpcPort, rootCertPath: rootPath(), token: await saToken('frontend', sa) },
    });
    agents.push(agent);
    await agent.waitForLog(/built-in proxy ready/, 15_000);
    return agent;
  }

  before(async () => {
    key = await signingKey('orch-1');
    jwks = await startJwksServer([key]);
    app = await startHttpApp('shop');
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'mesh-mtls-'));
    fs.writeFileSync(path.join(dir, 'mesh.yaml'), shopMeshYaml({ port: app.port, serverIp: SERVER_IP, clientBind: CLIENT_BIND, policies: POLICIES }));
    daemon = await startDaemon(['--configDir', dir], {
      PILOT_DEBOUNCE_AFTER: '10ms',
      PILOT_DEBOUNCE_MAX: '100ms',
      JWT_RULE: JSON.stringify({ issuer: ORCH_ISSUER, jwksUri: jwks.url }),
    });
    expect(daemon.secureGrpcPort).to.be.greaterThan(0);
    server = await startAgent({
      grpcPort: daemon.grpcPort,
      instanceIp: SERVER_IP,
      namespace: 'backend',
      labels: { app: 'shop', 'security.mesh.io/tlsMode': 'mesh' },
      secure: { secureGrpcPort: daemon.secureGrpcPort, rootCertPath: rootPath(), token: await saToken('backend', 'shop') },
    });
    agents.push(server);
    await server.waitForLog(/built-in proxy ready/, 15_000);
  });

  after(async () => {
    for (const a of agents) await a.stop();
    await daemon?.stop();
    await app?.close();
    await jwks?.close();
  });

  it('gives the agent a certificate chain that verifies against the published root, with its SPIFFE ID', () => {
    const certs = path.join(server.workDir, 'certs');
    for (const f of ['key.pem', 'cert-chain.pem', 'root-cert.pem']) expect(fs.existsSync(path.join(certs, f)), f).to.equal(true);
    expect(fs.statSync(path.join(certs, 'key.pem')).mode & 0o777).to.equal(0o600);
    const out = execFileSync('openssl', ['verify', '-CAfile', rootPath(), path.join(certs, 'cert-chain.pem')]).toString();
    expect(out).to.match(/OK/);
    const text = execFileSync('openssl', ['x509', '-in', path.join(certs, 'cert-chain.pem'), '-noout', '-ext', 'subjectAltName']).toString();
    expect(text).to.contain('URI:spiffe://cluster.local/ns/backend/sa/shop');
    expect(server.output()).to.match(/xDS proxy on .* \(mutual TLS\)/);
  });

  it('lets an allowed caller through over STRICT mTLS (200)', async () => {
    await client('buyer', '127.0.0.62');
    const answer = await eventually(async () => (await request(CLIENT_BIND, app.port, '/get', { host: 'shop.backend.svc.cluster.local' })).status, 200, 10_000);
    expect(answer).to.equal(200);
  });

  it('serves xDS over TLS to a workload certificate, only as a proxy of its own namespace', async () => {
    const certs = path.join(server.workDir, 'certs');
    const creds = grpc.credentials.createSsl(
      fs.readFileSync(rootPath()),
      fs.readFileSync(path.join(certs, 'key.pem')),
      fs.readFileSync(path.join(certs, 'cert-chain.pem')),
    );
    const tlsName = { 'grpc.ssl_target_name_override': 'meshd.mesh-system.svc' };
    const own = new SotwClient(daemon.secureGrpcPort, sidecarNode('127.0.0.81', 'backend'), creds, tlsName);
    const other = new SotwClient(daemon.secureGrpcPort, sidecarNode('127.0.0.82', 'frontend'), creds, tlsName);
    const anonymous = new SotwClient(daemon.secureGrpcPort, sidecarNode('127.0.0.83', 'backend'), grpc.credentials.createSsl(fs.readFileSync(rootPath())), tlsName);
    try {
      for (const c of [own, other, anonymous]) c.send({ type_url: TypeUrl.Cluster });
      expect((await own.next(TypeUrl.Cluster)).type_url).to.equal(TypeUrl.Cluster);
      const refused = await other.next(TypeUrl.Cluster).then(() => undefined, (e: grpc.ServiceError) => e);
      expect(refused?.code).to.equal(grpc.status.PERMISSION_DENIED);
      expect(refused?.details).to.match(/namespace "frontend"/);
      const unauthenticated = await anonymous.next(TypeUrl.Cluster).then(() => undefined, (e: grpc.ServiceError) => e);
      expect(unauthenticated?.code).to.equal(grpc.status.UNAUTHENTICATED);
    } finally {
      for (const c of [own, other, anonymous]) c.close();
    }
  });

  it('refuses a plaintext client at the STRICT inbound listener', async () => {
    const outcome = await new Promise<string>((resolve) => {
      const socket = net.connect({ host: SERVER_IP, port: app.port }, () => socket.write('GET / HTTP/1.1\r\nhost: shop\r\n\r\n'));
      let data = '';
      socket.on('data', (d) => (data += d.toString()));
      socket.on('close', () => resolve(data === '' ? 'closed' : data));
      socket.on('error', () => resolve('error'));
      socket.setTimeout(5000, () => socket.destroy());
    });
    expect(outcome).to.not.match(/^HTTP\/1\.1 200/);
    expect(['closed', 'error']).to.include(outcome);
  });

  it('gates by the caller identity: a caller with another service account gets 403', async () => {
    await agents.pop()!.stop();
    await client('snoop', '127.0.0.63');
    const status = await eventually(async () => (await request(CLIENT_BIND, app.port, '/get', { host: 'shop.backend.svc.cluster.local' })).status, 403, 10_000);
    expect(status).to.equal(403);
  });
});
