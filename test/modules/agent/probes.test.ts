import * as grpc from '@grpc/grpc-js';
import { expect } from 'chai';
import * as http from 'node:http';
import * as https from 'node:https';
import * as net from 'node:net';
import type { AddressInfo } from 'node:net';
import { AppProbersError, decodeHealthCheckStatus, HEALTH_CHECK_METHOD, parseAppProbers, ProbeOutcome } from '../../../src/modules/agent/probes';
import { StatusServer } from '../../../src/modules/agent/status-server';
import { request } from '../../helpers/http-apps';
import { selfSignedTls } from '../security/authn-jwks-server';

interface Seen {
  url: string;
  headers: http.IncomingHttpHeaders;
}

/** The application: a few paths with the answers probes meet in life. */
async function startApp(handler: http.RequestListener, tls?: { key: Buffer; cert: Buffer }): Promise<{ port: number; server: http.Server }> {
  const server = tls ? https.createServer(tls, handler) : http.createServer(handler);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { port: (server.address() as AddressInfo).port, server };
}

function close(server: http.Server | net.Server): Promise<void> {
  if (server instanceof http.Server) server.closeAllConnections();
  return new Promise((resolve) => server.close(() => resolve()));
}

/** A port nothing listens on: bound, then released. */
async function closedPort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  await close(server);
  return port;
}

/** A gRPC server whose Health/Check answers `statuses[service]` (1 = SERVING), or one without the health service. */
async function startGrpcServer(statuses?: Record<string, number>): Promise<{ port: number; server: grpc.Server }> {
  const server = new grpc.Server();
  if (statuses) {
    const encodeStatus = (status: number) => Buffer.from([0x08, status]);
    // Request: field 1 (service), a string; an object, as a real message is (grpc-js takes a falsy request for none).
    const decodeRequest = (bytes: Buffer) => ({ service: bytes.length > 2 ? bytes.subarray(2).toString('utf8') : '' });
    server.addService(
      {
        Check: {
          path: HEALTH_CHECK_METHOD,
          requestStream: false,
          responseStream: false,
          requestSerialize: (r: { service: string }) => Buffer.from(r.service),
          requestDeserialize: decodeRequest,
          responseSerialize: encodeStatus,
          responseDeserialize: decodeHealthCheckStatus,
        },
      },
      {
        Check: (call: grpc.ServerUnaryCall<{ service: string }, number>, callback: grpc.sendUnaryData<number>) => {
          const status = statuses[call.request.service];
          if (status === undefined) callback({ code: grpc.status.NOT_FOUND, details: `unknown service ${call.request.service}` });
          else callback(null, status);
        },
      },
    );
  }
  const port = await new Promise<number>((resolve, reject) => server.bindAsync('127.0.0.1:0', grpc.ServerCredentials.createInsecure(), (err, p) => (err ? reject(err) : resolve(p))));
  return { port, server };
}

describe('agent: application probes on the status port (MESH_ORCH_APP_PROBERS)', function () {
  this.timeout(20_000);
  const seen: Seen[] = [];
  let app: { port: number; server: http.Server };
  let tlsApp: { port: number; server: http.Server };
  let grpcApp: { port: number; server: grpc.Server };
  let plainGrpc: { port: number; server: grpc.Server };
  let deadPort: number;
  let status: StatusServer;
  let statusPort: number;
  let ready: string | undefined;
  const failures: [string, ProbeOutcome][] = [];

  before(async () => {
    app = await startApp((req, res) => {
      seen.push({ url: req.url ?? '', headers: req.headers });
      const url = req.url ?? '/';
      if (url === '/healthz') res.writeHead(200).end('ok');
      else if (url === '/sick') res.writeHead(503).end('sick');
      else if (url === '/slow') return; // never answers
      else if (url === '/moved') res.writeHead(302, { location: '/healthz' }).end();
      else if (url === '/moved-sick') res.writeHead(301, { location: '/sick' }).end();
      else if (url === '/elsewhere') res.writeHead(302, { location: 'http://probe-target.invalid/healthz' }).end();
      else if (url.startsWith('/loop')) res.writeHead(302, { location: `/loop${url.length}` }).end();
      else res.writeHead(404).end();
    });
    tlsApp = await startApp((_req, res) => res.writeHead(204).end(), selfSignedTls());
    grpcApp = await startGrpcServer({ '': 1, down: 2 });
    plainGrpc = await startGrpcServer();
    deadPort = await closedPort();
    const probers = parseAppProbers(
      JSON.stringify({
        '/app-health/web/livez': { httpGet: { path: '/healthz', port: app.port, scheme: 'HTTP', httpHeaders: [{ name: 'X-Custom', value: 'c' }, { name: 'X-Probe', value: 'from-prober' }, { name: 'Host', value: 'app.example' }] }, timeoutSeconds: 1 },
        '/app-health/web/readyz': { httpGet: { path: 'sick', port: app.port } },
        '/app-health/slow/livez': { httpGet: { path: '/slow', port: app.port }, timeoutSeconds: 1 },
        '/app-health/down/livez': { httpGet: { path: '/healthz', port: deadPort } },
        '/app-health/moved/livez': { httpGet: { path: '/moved', port: app.port } },
        '/app-health/moved/readyz': { httpGet: { path: '/moved-sick', port: app.port } },
        '/app-health/moved/startupz': { httpGet: { path: '/elsewhere', port: app.port } },
        '/app-health/loop/livez': { httpGet: { path: '/loop', port: app.port } },
        '/app-health/tls/livez': { httpGet: { path: '/', port: tlsApp.port, scheme: 'HTTPS' } },
        '/app-health/tcp/livez': { tcpSocket: { port: app.port } },
        '/app-health/tcp/readyz': { tcpSocket: { port: deadPort } },
        '/app-health/grpc/livez': { grpc: { port: grpcApp.port } },
        '/app-health/grpc/readyz': { grpc: { port: grpcApp.port, service: 'down' } },
        '/app-health/grpc/startupz': { grpc: { port: plainGrpc.port } },
        '/app-health/nogrpc/livez': { grpc: { port: deadPort }, timeoutSeconds: 1 },
      }),
    );
    status = new StatusServer({ notReadyReason: () => ready }, { appProbers: probers, onFailure: (path, outcome) => failures.push([path, outcome]) });
    statusPort = await status.start('127.0.0.1', 0);
  });

  after(async () => {
    await status?.stop();
    await Promise.all([app, tlsApp].filter(Boolean).map((a) => close(a.server)));
    for (const g of [grpcApp, plainGrpc]) g?.server.forceShutdown();
  });

  const probe = (path: string, headers: Record<string, string> = {}) => request('127.0.0.1', statusPort, path, headers);

  it('answers an httpGet probe with the app status, passing the kubelet headers on and the probe own headers over them', async () => {
    seen.length = 0;
    const res = await probe('/app-health/web/livez', { 'user-agent': 'kube-probe/1.30', 'x-probe': 'from-kubelet', accept: '*/*' });
    expect(res.status).to.equal(200);
    expect(seen).to.have.length(1);
    expect(seen[0].url).to.equal('/healthz');
    expect(seen[0].headers).to.include({ 'user-agent': 'kube-probe/1.30', accept: '*/*', 'x-custom': 'c', 'x-probe': 'from-prober', host: 'app.example' });
  });

  it('passes a failing app status through, and answers 500 when the app is not listening or does not answer in time', async () => {
    const sick = await probe('/app-health/web/readyz');
    expect(sick.status).to.equal(503);
    expect(sick.body).to.contain(`GET http://127.0.0.1:${app.port}/sick answered 503`);
    const down = await probe('/app-health/down/livez');
    expect(down.status).to.equal(500);
    expect(down.body).to.contain('ECONNREFUSED');
    const started = Date.now();
    const slow = await probe('/app-health/slow/livez');
    const took = Date.now() - started;
    expect(slow.status).to.equal(500);
    expect(slow.body).to.contain("no answer within the probe's 1000ms");
    expect(took).to.be.within(900, 4000);
    expect(failures.map(([p]) => p)).to.include.members(['/app-health/web/readyz', '/app-health/down/livez', '/app-health/slow/livez']);
  });

  it('follows redirects on the same host (10 at most) and counts one to another host as success', async () => {
    expect((await probe('/app-health/moved/livez')).status).to.equal(200);
    expect((await probe('/app-health/moved/readyz')).status).to.equal(503);
    const elsewhere = await probe('/app-health/moved/startupz');
    expect(elsewhere.status).to.equal(200);
    expect(elsewhere.body).to.contain('redirected to another host (probe-target.invalid)');
    const loop = await probe('/app-health/loop/livez');
    expect(loop.status).to.equal(500);
    expect(loop.body).to.contain('stopped after 10 redirects');
  });

  it('probes HTTPS without checking the certificate, as the kubelet does', async () => {
    const res = await probe('/app-health/tls/livez');
    expect(res.status).to.equal(204);
  });

  it('answers a tcpSocket probe 200 when the port accepts a connection, 500 when it does not', async () => {
    const open = await probe('/app-health/tcp/livez');
    expect(open.status).to.equal(200);
    const closed = await probe('/app-health/tcp/readyz');
    expect(closed.status).to.equal(500);
    expect(closed.body).to.contain(`TCP connection to 127.0.0.1:${deadPort} failed`);
  });

  it('answers a grpc probe 200 only when the health service says SERVING', async () => {
    expect((await probe('/app-health/grpc/livez')).status).to.equal(200);
    const down = await probe('/app-health/grpc/readyz');
    expect(down.status).to.equal(500);
    expect(down.body).to.contain('(service "down"): NOT_SERVING');
    const unimplemented = await probe('/app-health/grpc/startupz');
    expect(unimplemented.status).to.equal(500);
    expect(unimplemented.body).to.contain('does not implement grpc.health.v1.Health');
    const unreachable = await probe('/app-health/nogrpc/livez');
    expect(unreachable.status).to.equal(500);
  });

  it('answers 400 for an /app-health/ path with no probe (as the incumbent), 404 elsewhere, and still serves /healthz/ready', async () => {
    const unknown = await probe('/app-health/other/livez');
    expect(unknown.status).to.equal(400);
    expect(unknown.body).to.contain('no application probe is configured for /app-health/other/livez; configured: /app-health/web/livez');
    const elsewhere = await probe('/not-a-probe');
    expect(elsewhere.status).to.equal(404);
    ready = 'waiting for the first configuration';
    const notReady = await probe('/healthz/ready');
    expect(notReady.status).to.equal(503);
    expect(notReady.body).to.equal('not ready: waiting for the first configuration\n');
    ready = undefined;
    expect((await probe('/healthz/ready?x=1')).status).to.equal(200);
  });

  it('keeps the status server working without probes: every /app-health/ path is then a 400', async () => {
    const plain = new StatusServer({ notReadyReason: () => undefined });
    const port = await plain.start('127.0.0.1', 0);
    try {
      expect((await request('127.0.0.1', port, '/healthz/ready')).status).to.equal(200);
      const res = await request('127.0.0.1', port, '/app-health/web/livez');
      expect(res.status).to.equal(400);
      expect(res.body).to.contain('MESH_ORCH_APP_PROBERS is empty');
    } finally {
      await plain.stop();
    }
  });
});

describe('agent: reading MESH_ORCH_APP_PROBERS', () => {
  it('reads httpGet, tcpSocket and grpc probes with their defaults', () => {
    const probers = parseAppProbers(
      JSON.stringify({
        '/app-health/web/livez': { httpGet: { path: 'healthz', port: 8080 }, initialDelaySeconds: 3, periodSeconds: 10 },
        '/app-health/web/readyz': { tcpSocket: { port: 8080 }, timeoutSeconds: 5 },
        '/app-health/web/startupz': { grpc: { port: 9090, service: 'echo' }, timeoutSeconds: 0 },
        '/app-health/tls/livez': { httpGet: { path: '/', port: 8443, scheme: 'https', host: '127.0.0.7', httpHeaders: [{ name: 'x', value: 'y' }] } },
      }),
    );
    expect(probers.get('/app-health/web/livez')).to.deep.equal({ kind: 'httpGet', timeoutSeconds: 1, httpGet: { path: '/healthz', port: 8080, host: undefined, scheme: 'HTTP', httpHeaders: [] } });
    expect(probers.get('/app-health/web/readyz')).to.deep.equal({ kind: 'tcpSocket', timeoutSeconds: 5, tcpSocket: { port: 8080, host: undefined } });
    expect(probers.get('/app-health/web/startupz')).to.deep.equal({ kind: 'grpc', timeoutSeconds: 1, grpc: { port: 9090, service: 'echo' } });
    expect(probers.get('/app-health/tls/livez')).to.deep.include({ httpGet: { path: '/', port: 8443, host: '127.0.0.7', scheme: 'HTTPS', httpHeaders: [{ name: 'x', value: 'y' }] } });
    expect(parseAppProbers(undefined).size).to.equal(0);
    expect(parseAppProbers('  ').size).to.equal(0);
  });

  it('refuses what is not a valid probe map, naming MESH_ORCH_APP_PROBERS and the path', () => {
    const cases: [string, string][] = [
      ['{"/app-health/web/livez": ', 'MESH_ORCH_APP_PROBERS: not valid JSON'],
      ['["/app-health/web/livez"]', 'MESH_ORCH_APP_PROBERS: must be a JSON object from status-port path'],
      ['{"/app-health/web/livez": {"timeoutSeconds": 1}}', 'MESH_ORCH_APP_PROBERS: "/app-health/web/livez": has no httpGet, tcpSocket or grpc: one of them is needed'],
      ['{"/app-health/web/livez": {"exec": {"command": ["true"]}}}', 'has no httpGet, tcpSocket or grpc'],
      ['{"/app-health/web/livez": {"httpGet": {"port": 80}, "tcpSocket": {"port": 80}}}', 'has httpGet and tcpSocket: only one of httpGet, tcpSocket or grpc may be given'],
      ['{"/healthz/web": {"tcpSocket": {"port": 80}}}', 'MESH_ORCH_APP_PROBERS: "/healthz/web": the path must have the form /app-health/<container>/livez'],
      ['{"/app-health/web/livez": {"httpGet": {"port": "http"}}}', 'httpGet.port must be a port number from 1 to 65535 (named ports are resolved by the injector), not "http"'],
      ['{"/app-health/web/livez": {"tcpSocket": {"port": 70000}}}', 'tcpSocket.port must be a port number from 1 to 65535'],
      ['{"/app-health/web/livez": {"httpGet": {"port": 80, "scheme": "FTP"}}}', 'httpGet.scheme must be HTTP or HTTPS, not "FTP"'],
      ['{"/app-health/web/livez": {"httpGet": {"port": 80, "httpHeaders": [{"value": "x"}]}}}', 'httpGet.httpHeaders[0] must be {"name": "<header>", "value": "<text>"}'],
      ['{"/app-health/web/livez": {"grpc": {"port": 80}, "timeoutSeconds": "1s"}}', 'timeoutSeconds must be a whole number of seconds'],
    ];
    for (const [raw, message] of cases) expect(() => parseAppProbers(raw), raw).to.throw(AppProbersError, message);
  });
});
