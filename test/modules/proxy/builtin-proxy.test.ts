import { expect } from 'chai';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { BuiltInProxy } from '../../../src/modules/proxy/builtin-proxy';
import { ProxyLoggers } from '../../../src/modules/proxy/logging/proxy-loggers';
import { builtInProxy } from '../../helpers/builtin-proxy';
import { RunningDaemon, startDaemon } from '../../helpers/daemon';
import { HttpApp, request, startHttpApp } from '../../helpers/http-apps';
import { serviceEntryYaml, workloadServiceYaml } from '../../helpers/push';
import { usesSharedLoopbackNetwork } from '../../helpers/shared-network';

usesSharedLoopbackNetwork();

const services = (appPort: number) =>
  workloadServiceYaml({ namespace: 'foo', name: 'web', address: '127.0.0.41', ports: [`{ number: 9080, name: http, protocol: HTTP, targetPort: ${appPort} }`], labels: { app: 'web' } }) +
  serviceEntryYaml('foo', 'db', 'db.foo.svc.cluster.local', 'STATIC', `{ number: 9306, name: tcp, protocol: TCP, targetPort: ${appPort} }`, `
  location: MESH_INTERNAL
  endpoints: [{ address: 127.0.0.1 }]`);

function proxyNode(ip: string, labels: Record<string, string>) {
  return {
    id: `sidecar~${ip}~app.foo~foo.svc.cluster.local`,
    cluster: 'web.foo',
    metadata: { NAMESPACE: 'foo', INSTANCE_IPS: ip, INTERCEPTION_MODE: 'NONE', LABELS: labels },
  };
}

describe('built-in proxy: xDS to real HTTP and TCP traffic', function () {
  this.timeout(30_000);
  let dir: string;
  let daemon: RunningDaemon;
  let app: HttpApp;
  let proxy: BuiltInProxy;
  const logs: string[] = [];

  before(async () => {
    app = await startHttpApp('web');
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'mesh-proxy-'));
    fs.writeFileSync(path.join(dir, 'mesh.yaml'), services(app.port));
    daemon = await startDaemon(['--configDir', dir], { PILOT_DEBOUNCE_AFTER: '10ms' });
    proxy = builtInProxy();
    proxy.start({
      discoveryAddress: `127.0.0.1:${daemon.grpcPort}`,
      node: proxyNode('127.0.0.41', { app: 'web' }),
      loggers: new ProxyLoggers((r) => logs.push(`${r.level} ${r.logger} ${r.message}`), 'debug'),
    });
    await proxy.whenReady();
  });

  after(async () => {
    await proxy?.stop();
    await daemon?.stop();
    await app?.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it('binds the inbound listener on INSTANCE_IP:<service port> and forwards to the app', async () => {
    const answer = await request('127.0.0.41', 9080, '/hello?x=1', { host: 'web.foo.svc.cluster.local' });
    expect(answer.status).to.equal(200);
    expect(answer.body).to.equal('web GET /hello?x=1');
    expect(app.requests.at(-1)!.headers['x-forwarded-proto']).to.equal('http');
  });

  it('routes outbound requests by Host to the service endpoints (127.0.0.1:<service port>)', async () => {
    const answer = await request('127.0.0.1', 9080, '/out', { host: 'web.foo.svc.cluster.local:9080' });
    // The endpoint is the workload address on the workload port, where the app does not listen
    // (it listens on 127.0.0.1); what matters here is that the router picked the endpoint.
    expect([200, 503]).to.include(answer.status);
  });

  it('proxies TCP through tcp_proxy', async () => {
    const net = await import('node:net');
    const reply = await new Promise<string>((resolve, reject) => {
      const s = net.connect({ host: '127.0.0.1', port: 9306 }, () => s.write('GET /tcp HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n'));
      let data = '';
      s.on('data', (d) => (data += d));
      s.on('end', () => resolve(data));
      s.on('error', reject);
    });
    expect(reply).to.match(/^HTTP\/1.1 200/);
    expect(reply).to.contain('web GET /tcp');
  });

  it('answers an unknown host with the catch-all route (block_all: 502 without capture)', async () => {
    const answer = await request('127.0.0.1', 9080, '/', { host: 'unknown.example.com' });
    expect(answer.status, answer.body).to.equal(502);
  });
});
