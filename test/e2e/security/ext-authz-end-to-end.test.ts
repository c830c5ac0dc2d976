/**
 * CUSTOM AuthorizationPolicy end to end: the daemon reads an HTTP (then a gRPC) external authorizer from
 * its `--meshConfig` extensionProviders and generates the shadow RBAC + ext_authz filters; the
 * agent's built-in proxy checks real requests against a real HTTP authorization server
 * (reached through the provider's outbound cluster) before they reach the app. The mesh
 * config file is changed while everything runs (failOpen, statusOnError, providers), and the
 * proxy follows without a restart.
 */
import * as grpc from '@grpc/grpc-js';
import { expect } from 'chai';
import * as fs from 'node:fs';
import * as http from 'node:http';
import type { AddressInfo } from 'node:net';
import * as os from 'node:os';
import * as path from 'node:path';
import { RunningAgent, startAgent } from '../../helpers/agent';
import { RunningDaemon, startDaemon } from '../../helpers/daemon';
import { httpGet, metricValue } from '../../helpers/http';
import { HttpApp, request, startHttpApp } from '../../helpers/http-apps';
import { eventually } from '../../helpers/jwt';
import { workloadServiceYaml } from '../../helpers/push';
import { authorizationServiceDefinition } from '../../../src/plugins/ext-authz/grpc-check';
import { usesSharedLoopbackNetwork } from '../../helpers/shared-network';

usesSharedLoopbackNetwork();

const IP = '127.0.0.81';
const AUTHZ_IP = '127.0.0.82';
// Uncommon service ports: the built-in proxy binds 127.0.0.1:<port> for outbound listeners.
const HTTPBIN_PORT = 28411;
const AUTHZ_PORT = 28412;
const HOST = `httpbin.foo.svc.cluster.local:${HTTPBIN_PORT}`;

/** A real HTTP authorization server: decides by the `x-ext-authz` header it is sent. */
interface Authorizer {
  port: number;
  checks: { method: string; url: string; headers: http.IncomingHttpHeaders }[];
  close(): Promise<void>;
}

async function startAuthorizer(): Promise<Authorizer> {
  const checks: Authorizer['checks'] = [];
  const server = http.createServer((req, res) => {
    checks.push({ method: req.method ?? '', url: req.url ?? '', headers: req.headers });
    const verdict = req.headers['x-ext-authz'];
    if (verdict === 'allow') {
      res.writeHead(200, { 'x-ext-authz-check-result': 'allowed', 'x-not-listed': 'kept out' });
      res.end();
    } else if (verdict === 'boom') {
      res.writeHead(500);
      res.end('authorizer failure');
    } else {
      res.writeHead(403, { 'x-ext-authz-check-result': 'denied', 'x-not-listed': 'kept out', 'content-type': 'text/plain' });
      res.end('denied by the authorizer');
    }
  });
  await new Promise<void>((resolve) => server.listen(0, AUTHZ_IP, resolve));
  return {
    port: (server.address() as AddressInfo).port,
    checks,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

function meshConfig(provider: Record<string, unknown>): string {
  return `${JSON.stringify({
    extensionProviders: [
      {
        name: 'ext-authz-http',
        envoyExtAuthzHttp: {
          service: 'foo/authz.foo.svc.cluster.local',
          port: AUTHZ_PORT,
          timeout: '1s',
          pathPrefix: '/check',
          includeRequestHeadersInCheck: ['x-ext-authz'],
          headersToUpstreamOnAllow: ['x-ext-authz-check-result'],
          headersToDownstreamOnDeny: ['x-ext-authz-check-result'],
          ...provider,
        },
      },
      { name: 'ghost', envoyExtAuthzHttp: { service: 'ghost.foo.svc.cluster.local', port: 80 } },
    ],
  })}\n`;
}

function customPolicy(provider: string): string {
  return `
apiVersion: security.mesh.io/v1
kind: AuthorizationPolicy
metadata: { name: ext-authz, namespace: foo }
spec:
  selector: { matchLabels: { app: httpbin } }
  action: CUSTOM
  provider: { name: ${provider} }
  rules: [{ to: [{ operation: { paths: ["/custom", "/custom/*"] } }] }]
`;
}

function authzServiceYaml(targetPort: number): string {
  return `
apiVersion: networking.mesh.io/v1
kind: ServiceEntry
metadata: { name: authz, namespace: foo }
spec:
  hosts: [authz.foo.svc.cluster.local]
  location: MESH_INTERNAL
  resolution: STATIC
  ports: [{ number: ${AUTHZ_PORT}, name: http, protocol: HTTP, targetPort: ${targetPort} }]
  endpoints: [{ address: ${AUTHZ_IP} }]
`;
}

describe('CUSTOM authorization through an HTTP ext_authz server, end to end through the built-in proxy', function () {
  this.timeout(60_000);
  let dir: string;
  let app: HttpApp;
  let authorizer: Authorizer;
  let daemon: RunningDaemon;
  let agent: RunningAgent;
  const meshFile = () => path.join(dir, 'mesh.yaml');
  const call = (p: string, verdict?: string) => request(IP, HTTPBIN_PORT, p, { host: HOST, 'x-other': 'secret', ...(verdict ? { 'x-ext-authz': verdict } : {}) });
  const statusOf = async (p: string, verdict?: string) => (await call(p, verdict)).status;

  before(async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'mesh-ext-authz-'));
    fs.mkdirSync(path.join(dir, 'config'));
    app = await startHttpApp('httpbin');
    authorizer = await startAuthorizer();
    fs.writeFileSync(meshFile(), meshConfig({}));
    const config = path.join(dir, 'config');
    fs.writeFileSync(
      path.join(config, 'services.yaml'),
      `${workloadServiceYaml({ namespace: 'foo', name: 'httpbin', address: IP, ports: [`{ number: ${HTTPBIN_PORT}, name: http, protocol: HTTP, targetPort: ${app.port} }`] })}---${authzServiceYaml(authorizer.port)}`,
    );
    fs.writeFileSync(path.join(config, 'policy.yaml'), customPolicy('ext-authz-http'));
    daemon = await startDaemon(['--configDir', config, '--meshConfig', meshFile()], { PILOT_DEBOUNCE_AFTER: '10ms', PILOT_DEBOUNCE_MAX: '100ms' });
    agent = await startAgent({ grpcPort: daemon.grpcPort, instanceIp: IP, namespace: 'foo', labels: { app: 'httpbin', version: 'v1' } });
    await agent.waitForLog(/built-in proxy ready/, 10_000);
  });
  after(async () => {
    await agent?.stop();
    await daemon?.stop();
    await app?.close();
    await authorizer?.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it('checks only the requests the policy selects: other paths go straight to the app', async () => {
    const before = authorizer.checks.length;
    const answer = await call('/public', 'deny');
    expect(answer.status).to.equal(200);
    expect(answer.body).to.equal('httpbin GET /public');
    expect(authorizer.checks.length).to.equal(before);
  });

  it('allowed (200): the request reaches the app with the headersToUpstreamOnAllow of the answer; the check carries method, prefixed path and the included headers only', async () => {
    const answer = await call('/custom/items?page=2', 'allow');
    expect(answer.status).to.equal(200);
    expect(answer.body).to.equal('httpbin GET /custom/items?page=2');
    const seen = app.requests[app.requests.length - 1];
    expect(seen.headers['x-ext-authz-check-result']).to.equal('allowed');
    expect(seen.headers['x-not-listed']).to.equal(undefined);
    const check = authorizer.checks[authorizer.checks.length - 1];
    expect([check.method, check.url]).to.deep.equal(['GET', '/check/custom/items?page=2']);
    expect(check.headers['x-ext-authz']).to.equal('allow');
    expect(check.headers.host).to.equal(HOST);
    expect(check.headers['x-other'], 'a header the provider does not include').to.equal(undefined);
  });

  it('denied (403 from the authorizer): its status, body and headersToDownstreamOnDeny reach the client, the app sees nothing', async () => {
    const requestsBefore = app.requests.length;
    const answer = await call('/custom', 'deny');
    expect(answer.status).to.equal(403);
    expect(answer.body).to.equal('denied by the authorizer');
    expect(answer.headers['x-ext-authz-check-result']).to.equal('denied');
    expect(answer.headers['x-not-listed']).to.equal(undefined);
    expect(app.requests.length).to.equal(requestsBefore);
  });

  it('an authorizer error (5xx) denies with statusOnError (403 by default) unless failOpen', async () => {
    const answer = await call('/custom', 'boom');
    expect([answer.status, answer.body]).to.deep.equal([403, '']);
  });

  it('the authorizer down: 403 without failOpen; the mesh config file changed to failOpen lets requests through, statusOnError changes the status, without a restart', async () => {
    await authorizer.close();
    expect(await statusOf('/custom', 'allow')).to.equal(403);
    expect(await statusOf('/public')).to.equal(200);

    fs.writeFileSync(meshFile(), meshConfig({ failOpen: true }));
    expect(await eventually(() => statusOf('/custom', 'deny'), 200, 10_000)).to.equal(200);
    expect(app.requests[app.requests.length - 1].url).to.equal('/custom');

    fs.writeFileSync(meshFile(), meshConfig({ statusOnError: '503' }));
    expect(await eventually(() => statusOf('/custom', 'allow'), 503, 10_000)).to.equal(503);
  });

  it('a policy naming a provider the mesh config lacks, or whose service is not in the registry, denies what it selects (fails closed)', async () => {
    fs.writeFileSync(path.join(dir, 'config', 'policy.yaml'), customPolicy('missing'));
    expect(await eventually(async () => (await call('/custom', 'allow')).body, 'RBAC: access denied', 10_000)).to.equal('RBAC: access denied');
    expect(await statusOf('/custom', 'allow')).to.equal(403);
    expect(await statusOf('/public')).to.equal(200);
    await daemon.waitForLog(/failed to process CUSTOM action for provider missing, will generate deny configs: available providers are \[ext-authz-http ghost\] but found "missing"/);

    fs.writeFileSync(path.join(dir, 'config', 'policy.yaml'), customPolicy('ghost'));
    await daemon.waitForLog(/failed to process CUSTOM action for provider ghost, will generate deny configs: failed to parse extension provider "ghost": could not find service ghost.foo.svc.cluster.local:80/, 10_000);
    expect(await statusOf('/custom', 'allow')).to.equal(403);
    expect(metricValue(await httpGet(daemon.monitoringPort, '/metrics'), 'provider_lookup_cluster_failures', { provider: 'ghost' })).to.be.greaterThan(0);
  });
});

describe('CUSTOM authorization through a gRPC ext_authz server (Authorization/Check), end to end through the built-in proxy', function () {
  this.timeout(60_000);
  const GRPC_IP = '127.0.0.84';
  const GRPC_AUTHZ_IP = '127.0.0.85';
  const PORT = 28413;
  const GRPC_AUTHZ_PORT = 28414;
  const host = `httpbin.foo.svc.cluster.local:${PORT}`;
  let dir: string;
  let app: HttpApp;
  let server: grpc.Server;
  const checks: Record<string, any>[] = []; // eslint-disable-line @typescript-eslint/no-explicit-any
  let daemon: RunningDaemon;
  let agent: RunningAgent;
  const call = (p: string, verdict?: string) => request(GRPC_IP, PORT, p, { host, ...(verdict ? { 'x-ext-authz': verdict } : {}) });

  before(async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'mesh-ext-authz-grpc-'));
    fs.mkdirSync(path.join(dir, 'config'));
    app = await startHttpApp('httpbin');
    server = new grpc.Server();
    server.addService(authorizationServiceDefinition(), {
      Check: (callObj: grpc.ServerUnaryCall<any, any>, callback: grpc.sendUnaryData<object>) => { // eslint-disable-line @typescript-eslint/no-explicit-any
        checks.push(callObj.request);
        const verdict = callObj.request.attributes?.request?.http?.headers?.['x-ext-authz'];
        if (verdict === 'allow') {
          callback(null, {
            status: { code: 0 },
            ok_response: { headers: [{ header: { key: 'x-ext-authz-check-result', value: 'allowed' } }], response_headers_to_add: [{ header: { key: 'x-authz-note', value: 'checked' } }] },
          });
        } else {
          callback(null, { status: { code: 7 }, denied_response: { status: { code: 401 }, headers: [{ header: { key: 'x-ext-authz-check-result', value: 'denied' } }], body: 'denied over gRPC' } });
        }
      },
    });
    const grpcPort = await new Promise<number>((resolve, reject) => server.bindAsync(`${GRPC_AUTHZ_IP}:0`, grpc.ServerCredentials.createInsecure(), (err, p) => (err ? reject(err) : resolve(p))));
    fs.writeFileSync(
      path.join(dir, 'mesh.yaml'),
      `extensionProviders: [{ name: ext-authz-grpc, envoyExtAuthzGrpc: { service: authz-grpc.foo.svc.cluster.local, port: ${GRPC_AUTHZ_PORT}, timeout: 1s } }]\n`,
    );
    fs.writeFileSync(
      path.join(dir, 'config', 'services.yaml'),
      `${workloadServiceYaml({ namespace: 'foo', name: 'httpbin', address: GRPC_IP, ports: [`{ number: ${PORT}, name: http, protocol: HTTP, targetPort: ${app.port} }`] })}---
apiVersion: networking.mesh.io/v1
kind: ServiceEntry
metadata: { name: authz-grpc, namespace: foo }
spec:
  hosts: [authz-grpc.foo.svc.cluster.local]
  location: MESH_INTERNAL
  resolution: STATIC
  ports: [{ number: ${GRPC_AUTHZ_PORT}, name: grpc, protocol: GRPC, targetPort: ${grpcPort} }]
  endpoints: [{ address: ${GRPC_AUTHZ_IP} }]
`,
    );
    fs.writeFileSync(path.join(dir, 'config', 'policy.yaml'), customPolicy('ext-authz-grpc'));
    daemon = await startDaemon(['--configDir', path.join(dir, 'config'), '--meshConfig', path.join(dir, 'mesh.yaml')], { PILOT_DEBOUNCE_AFTER: '10ms', PILOT_DEBOUNCE_MAX: '100ms' });
    agent = await startAgent({ grpcPort: daemon.grpcPort, instanceIp: GRPC_IP, namespace: 'foo', labels: { app: 'httpbin', version: 'v1' } });
    await agent.waitForLog(/built-in proxy ready/, 10_000);
  });
  after(async () => {
    await agent?.stop();
    await daemon?.stop();
    await app?.close();
    server?.forceShutdown();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it('OK: the request reaches the app with the OkHttpResponse headers, and the client gets response_headers_to_add; the check carries the request attributes', async () => {
    const answer = await call('/custom/a?b=c', 'allow');
    expect([answer.status, answer.body]).to.deep.equal([200, 'httpbin GET /custom/a?b=c']);
    expect(answer.headers['x-authz-note']).to.equal('checked');
    expect(app.requests[app.requests.length - 1].headers['x-ext-authz-check-result']).to.equal('allowed');
    const http = checks[checks.length - 1].attributes.request.http;
    expect([http.method, http.path, http.host, http.headers['x-ext-authz']]).to.deep.equal(['GET', '/custom/a?b=c', host, 'allow']);
    expect(checks[checks.length - 1].attributes.destination.address.socket_address).to.deep.equal({ address: GRPC_IP, port_value: PORT });
  });

  it('denied: the DeniedHttpResponse status, headers and body reach the client; paths the policy does not select are not checked', async () => {
    const denied = await call('/custom', 'deny');
    expect([denied.status, denied.body, denied.headers['x-ext-authz-check-result']]).to.deep.equal([401, 'denied over gRPC', 'denied']);
    const before = checks.length;
    expect((await call('/public', 'deny')).status).to.equal(200);
    expect(checks.length).to.equal(before);
  });

  it('the authorization server gone: 403 (no failOpen)', async () => {
    server.forceShutdown();
    expect((await call('/custom', 'allow')).status).to.equal(403);
  });
});
