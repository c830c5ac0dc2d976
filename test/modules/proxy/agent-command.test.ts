import { expect } from 'chai';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { RunningAgent, startAgent } from '../../helpers/agent';
import { RunningDaemon, startDaemon } from '../../helpers/daemon';
import { HttpApp, request, startHttpApp } from '../../helpers/http-apps';
import { workloadServiceYaml } from '../../helpers/push';
import { runCli } from '../../helpers/run-cli';
import { usesSharedLoopbackNetwork } from '../../helpers/shared-network';

usesSharedLoopbackNetwork();

const SERVICE = (appPort: number) =>
  workloadServiceYaml({ namespace: 'foo', name: 'shop', address: '127.0.0.42', ports: [`{ number: 9081, name: http, protocol: HTTP, targetPort: ${appPort} }`], labels: { app: 'shop' } });

describe('pilot-agent proxy with the built-in proxy', function () {
  this.timeout(40_000);
  let dir: string;
  let daemon: RunningDaemon;
  let app: HttpApp;
  let agent: RunningAgent;

  before(async () => {
    app = await startHttpApp('shop');
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'mesh-agent-'));
    fs.writeFileSync(path.join(dir, 'shop.yaml'), SERVICE(app.port));
    daemon = await startDaemon(['--configDir', dir], { PILOT_DEBOUNCE_AFTER: '10ms' });
    agent = await startAgent({ grpcPort: daemon.grpcPort, instanceIp: '127.0.0.42', namespace: 'foo', labels: { app: 'shop' } });
  });

  after(async () => {
    await agent?.stop();
    await daemon?.stop();
    await app?.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it('says which proxy it started, and `pilot-agent wait` returns once it is ready', async () => {
    expect(agent.output()).to.match(/no Envoy binary at \/nonexistent\/envoy: starting the built-in proxy/);
    const wait = await runCli('pilot-agent', ['wait', '--url', `http://127.0.0.1:${agent.statusPort}/healthz/ready`, '--timeoutSeconds', '10']);
    expect(wait.stderr).to.equal('');
    expect(wait.code).to.equal(0);
    expect(wait.stdout).to.contain('The proxy is ready.');
    const answer = await request('127.0.0.42', 9081, '/items', { host: 'shop.foo.svc.cluster.local' });
    expect(answer.status).to.equal(200);
    expect(answer.body).to.equal('shop GET /items');
  });

  it('shows what it was sent on the admin port (`pilot-agent request GET config_dump`)', async () => {
    const res = await runCli('pilot-agent', ['request', 'GET', 'config_dump', '--debug-port', String(agent.adminPort)]);
    expect(res.code, res.stderr).to.equal(0);
    const dump = JSON.parse(res.stdout);
    const listeners = dump.configs.find((c: { '@type': string }) => c['@type'].endsWith('ListenersConfigDump'));
    expect(listeners.dynamic_listeners.map((l: { name: string }) => l.name)).to.include('127.0.0.42_9081');
  });

  it('reports not ready, with the reason, while the daemon is unreachable', async () => {
    const lonely = await startAgent({ grpcPort: 1, instanceIp: '127.0.0.43', namespace: 'foo', labels: {} });
    try {
      const wait = await runCli('pilot-agent', ['wait', '--url', `http://127.0.0.1:${lonely.statusPort}/healthz/ready`, '--timeoutSeconds', '1', '--periodMillis', '200']);
      expect(wait.code).to.not.equal(0);
      expect(wait.stderr).to.contain('HTTP status code 503');
    } finally {
      await lonely.stop();
    }
  });

  it('refuses a bad PROXY_CONFIG with the field named, and a capture mode the built-in proxy cannot serve', async () => {
    const bad = await runCli('pilot-agent', ['proxy', '--meshConfig', '/nonexistent'], {
      env: { INSTANCE_IP: '127.0.0.44', PROXY_CONFIG: '{"proxyAdminPort": "lots"}' },
    });
    expect(bad.code).to.not.equal(0);
    expect(bad.stderr).to.contain('PROXY_CONFIG: proxyAdminPort: must be a port number');
    const capture = await runCli('pilot-agent', ['proxy', '--meshConfig', '/nonexistent'], {
      env: { INSTANCE_IP: '127.0.0.44', PROXY_CONFIG: '{"binaryPath": "/nonexistent/envoy", "controlPlaneAuthPolicy": "NONE"}' },
    });
    expect(capture.code).to.not.equal(0);
    expect(capture.stderr).to.contain('the built-in proxy needs interceptionMode NONE');
  });
});
