/**
 * `pilot-agent proxy` features a user sees from outside: Envoy started with the bootstrap the
 * agent wrote (a stand-in binary records how it was run), drain on SIGTERM
 * (MINIMUM_DRAIN_DURATION), and the DNS proxy answering a mesh name from the daemon's name
 * table (MESH_META_DNS_CAPTURE). Also the daemon's `--tls-cipher-suites`.
 */
import { expect } from 'chai';
import * as fs from 'node:fs';
import * as http from 'node:http';
import * as os from 'node:os';
import * as path from 'node:path';
import * as tls from 'node:tls';
import { ask, dataOf, deadPort } from '../agent/dns-helpers';
import { startAgent } from '../../helpers/agent';
import { RunningDaemon, startDaemon } from '../../helpers/daemon';
import { startProgram } from '../../helpers/program';
import { runCli } from '../../helpers/run-cli';
import { usesSharedLoopbackNetwork } from '../../helpers/shared-network';

usesSharedLoopbackNetwork();

function statusOf(port: number): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    http
      .get({ host: '127.0.0.1', port, path: '/healthz/ready' }, (res) => {
        let body = '';
        res.on('data', (d) => (body += d));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
      })
      .on('error', reject);
  });
}

describe('pilot-agent proxy: Envoy, drain and DNS', function () {
  this.timeout(60_000);
  let dir: string;
  let daemon: RunningDaemon;

  before(async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'mesh-agent-features-'));
    fs.writeFileSync(
      path.join(dir, 'db.yaml'),
      `apiVersion: networking.mesh.io/v1
kind: ServiceEntry
metadata: { name: db, namespace: foo }
spec:
  hosts: [db.foo.svc.cluster.local]
  addresses: [240.0.0.7]
  location: MESH_INTERNAL
  resolution: STATIC
  ports: [{ number: 5432, name: tcp, protocol: TCP }]
  endpoints: [{ address: 10.1.1.1 }]
`,
    );
    daemon = await startDaemon(['--configDir', dir], { PILOT_DEBOUNCE_AFTER: '10ms' });
  });

  after(async () => {
    await daemon?.stop();
  });

  it('starts Envoy with the bootstrap it wrote and the command line from its flags', async () => {
    const work = fs.mkdtempSync(path.join(os.tmpdir(), 'mesh-envoy-'));
    const fakeEnvoy = path.join(work, 'envoy');
    fs.writeFileSync(fakeEnvoy, `#!/bin/sh\necho "$@" > ${path.join(work, 'args')}\nexec sleep 60\n`, { mode: 0o755 });
    const proxyConfig = { discoveryAddress: `127.0.0.1:${daemon.grpcPort}`, controlPlaneAuthPolicy: 'NONE', interceptionMode: 'REDIRECT', binaryPath: fakeEnvoy, configPath: path.join(work, 'proxy'), statusPort: 0, proxyAdminPort: 15000 };
    const agent = startProgram('pilot-agent', ['proxy', '--meshConfig', '/nonexistent/mesh', '--concurrency', '2', '--proxyLogLevel', 'info,upstream:debug'], {
      INSTANCE_IP: '127.0.0.44',
      POD_NAME: 'web',
      POD_NAMESPACE: 'foo',
      PROXY_CONFIG: JSON.stringify(proxyConfig),
      MINIMUM_DRAIN_DURATION: '0s',
    }, work);
    try {
      await agent.waitForLog(/starting Envoy/, 15_000);
      const deadline = Date.now() + 5000;
      while (!fs.existsSync(path.join(work, 'args')) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
      const args = fs.readFileSync(path.join(work, 'args'), 'utf8').trim();
      const bootstrapFile = path.join(work, 'proxy', 'envoy-rev.json');
      expect(args).to.contain(`-c ${bootstrapFile}`);
      expect(args).to.contain('--concurrency 2');
      expect(args).to.match(/-l info/);
      expect(args).to.contain('upstream:debug');
      const bootstrap = JSON.parse(fs.readFileSync(bootstrapFile, 'utf8'));
      expect(bootstrap.node.id).to.equal('sidecar~127.0.0.44~web.foo~foo.svc.cluster.local');
      expect(bootstrap.admin.address.socket_address.port_value).to.equal(15000);
      const clusters = bootstrap.static_resources.clusters.map((c: { name: string }) => c.name);
      expect(clusters).to.include.members(['xds-grpc', 'sds-grpc']);
      expect(agent.output()).to.match(/xDS proxy on .*XDS → 127\.0\.0\.1:\d+ \(plaintext\)/);
    } finally {
      await agent.stop();
    }
  });

  it('drains on SIGTERM: not ready at once, up for MINIMUM_DRAIN_DURATION, then gone', async () => {
    const agent = await startAgent({ grpcPort: daemon.grpcPort, instanceIp: '127.0.0.45', namespace: 'foo', labels: { app: 'x' }, env: { MINIMUM_DRAIN_DURATION: '1500ms' } });
    await agent.waitForLog(/built-in proxy ready/, 10_000);
    expect((await statusOf(agent.statusPort)).status).to.equal(200);
    const started = Date.now();
    const exited = agent.stop('SIGTERM');
    await agent.waitForLog(/draining for 1500 ms/, 5000);
    const during = await statusOf(agent.statusPort);
    expect(during.status).to.equal(503);
    expect(during.body).to.contain('draining');
    await exited;
    expect(Date.now() - started).to.be.at.least(1400);
  });

  it('answers a mesh name from the daemon name table on DNS_PROXY_ADDR, with MESH_META_DNS_CAPTURE', async () => {
    const port = await deadPort();
    const agent = await startAgent({
      grpcPort: daemon.grpcPort,
      instanceIp: '127.0.0.46',
      namespace: 'foo',
      labels: { app: 'y' },
      env: { MESH_META_DNS_CAPTURE: 'true', DNS_PROXY_ADDR: `127.0.0.1:${port}` },
    });
    try {
      await agent.waitForLog(/DNS proxy listening on 127\.0\.0\.1:\d+/, 10_000);
      let answer: string[] = [];
      const deadline = Date.now() + 10_000;
      while (answer.length === 0 && Date.now() < deadline) {
        answer = dataOf(await ask(port, 'db.foo.svc.cluster.local', 'A'), 'A');
        if (answer.length === 0) await new Promise((r) => setTimeout(r, 100));
      }
      expect(answer).to.deep.equal(['240.0.0.7']);
    } finally {
      await agent.stop();
    }
  });
});

describe('pilot-discovery --tls-cipher-suites', function () {
  this.timeout(30_000);

  it('serves TLS 1.2 with the chosen suite only', async () => {
    const daemon = await startDaemon(['--tls-cipher-suites', 'TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384']);
    try {
      const cipher = await new Promise<string>((resolve, reject) => {
        const socket = tls.connect({ host: '127.0.0.1', port: daemon.secureGrpcPort, servername: 'meshd.mesh-system.svc', ca: daemon.rootCertPem(), maxVersion: 'TLSv1.2', ALPNProtocols: ['h2'] }, () => {
          resolve(socket.getCipher().standardName);
          socket.destroy();
        });
        socket.on('error', reject);
      });
      expect(cipher).to.equal('TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384');
    } finally {
      await daemon.stop();
    }
  });

  it('refuses an unknown suite by name, with a non-zero exit', async () => {
    const r = await runCli('pilot-discovery', ['discovery', '--tls-cipher-suites', 'TLS_FAST_AND_LOOSE', '--grpcAddr', '127.0.0.1:0', '--httpAddr', '127.0.0.1:0', '--monitoringAddr', '127.0.0.1:0']);
    expect(r.code).to.not.equal(0);
    expect(r.stderr).to.contain('--tls-cipher-suites: unknown cipher suite "TLS_FAST_AND_LOOSE"');
  });
});
