import { createHash, randomBytes } from 'node:crypto';
import * as http from 'node:http';
import * as https from 'node:https';
import * as net from 'node:net';
import { PassThrough, Writable } from 'node:stream';
import * as k8s from '@kubernetes/client-node';
import { expect } from 'chai';
import type { WebSocket } from 'ws';
import { OrchApiServer, startOrchApiServer } from '../orch-api';
import { runPod } from '../orch-mesh';
import { request } from './support';

/*
 * pods/<name>/portforward of the in-process API server, reached with @kubernetes/client-node's
 * own PortForward (as any client of the real server would), to real local TCP and HTTP servers.
 */

interface Forward {
  ws: WebSocket;
  input: PassThrough;
  /** Everything the data channel brought so far. */
  received(): Buffer;
  /** The error channel's text so far. */
  errorText(): string;
  closed: Promise<void>;
}

async function forward(kc: k8s.KubeConfig, namespace: string, pod: string, port: number): Promise<Forward> {
  const chunks: Buffer[] = [];
  let errorText = '';
  const output = new Writable({
    write(c: Buffer, _e, cb) {
      chunks.push(c);
      cb();
    },
  });
  const errors = new Writable({
    write(c: Buffer, _e, cb) {
      errorText += c.toString();
      cb();
    },
  });
  const input = new PassThrough();
  const ws = (await new k8s.PortForward(kc).portForward(namespace, pod, [port], output, errors, input)) as unknown as WebSocket;
  const closed = new Promise<void>((resolve) => (ws.readyState === 3 ? resolve() : ws.once('close', () => resolve())));
  return { ws, input, received: () => Buffer.concat(chunks), errorText: () => errorText, closed };
}

async function until(what: string, accept: () => boolean, ms = 10_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!accept()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

function within<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout;
  return Promise.race([promise, new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error(`timed out: ${what}`)), ms)))]).finally(() => clearTimeout(timer));
}

function listen(server: net.Server): Promise<number> {
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve((server.address() as net.AddressInfo).port)));
}

/** A raw upgrade request to the server, for the status and Status body of a refusal. */
function rawUpgrade(server: OrchApiServer, path: string, headers: Record<string, string> = {}): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = https.request(new URL(path, server.url), {
      ca: server.caPem,
      agent: false,
      headers: { Connection: 'Upgrade', Upgrade: 'websocket', 'Sec-WebSocket-Version': '13', 'Sec-WebSocket-Key': randomBytes(16).toString('base64'), 'Sec-WebSocket-Protocol': 'v4.channel.k8s.io', Authorization: `Bearer ${server.token}`, ...headers },
      timeout: 10_000,
    });
    req.on('response', (res) => {
      let body = '';
      res.on('data', (c) => (body += c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
    });
    req.on('upgrade', (res, socket) => {
      socket.destroy();
      resolve({ status: res.statusCode ?? 0, body: '' });
    });
    req.on('error', reject);
    req.end();
  });
}

describe('orch-api: pods/portforward', function () {
  this.timeout(30_000);
  let server: OrchApiServer;
  let kc: k8s.KubeConfig;
  const closers: (() => unknown)[] = [];

  beforeEach(async () => {
    server = await startOrchApiServer();
    kc = server.kubeConfig();
  });
  afterEach(async () => {
    for (const close of closers.splice(0)) await close();
    await server.stop();
  });

  async function echoServer(): Promise<{ port: number; connections: () => number }> {
    const sockets = new Set<net.Socket>();
    const echo = net.createServer((s) => {
      sockets.add(s);
      s.on('close', () => sockets.delete(s));
      s.on('error', () => undefined);
      s.pipe(s);
    });
    const port = await listen(echo);
    closers.push(() => {
      for (const s of sockets) s.destroy();
      return new Promise((r) => echo.close(r));
    });
    return { port, connections: () => sockets.size };
  }

  it('bridges the data channel to the registered address: an HTTP exchange through client-node', async () => {
    const app = http.createServer((req, res) => res.end(`hello from ${req.url}`));
    const appPort = await listen(app);
    closers.push(() => new Promise((r) => app.close(r)));
    await runPod(server, { name: 'web', namespace: 'default', ports: { 8080: appPort } });
    const f = await forward(kc, 'default', 'web', 8080);
    f.input.write('GET /stats?x=1 HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n');
    await within(f.closed, 10_000, 'the forward to close after the answer');
    const text = f.received().toString();
    expect(text).to.match(/^HTTP\/1\.1 200 OK\r\n/);
    expect(text).to.match(/hello from \/stats\?x=1$/);
    expect(f.errorText()).to.equal('');
    await until('no forward left', () => server.portForward.active === 0);
    const entry = server.requests.log.find((r) => r.resource === 'pods/portforward')!;
    expect(entry).to.include({ method: 'GET', path: '/api/v1/namespaces/default/pods/web/portforward', verb: 'create', status: 101 });
    expect(entry.query).to.deep.equal({ ports: '8080' });
    expect(server.requests.count({ verb: 'create', resource: 'pods/portforward' })).to.equal(1);
  });

  it('carries a big payload both ways intact (raw TCP echo)', async () => {
    const echo = await echoServer();
    await runPod(server, { name: 'echo', ports: { 7: echo.port } });
    const f = await forward(kc, 'default', 'echo', 7);
    const payload = randomBytes(8 * 1024 * 1024);
    for (let i = 0; i < payload.length; i += 64 * 1024) f.input.write(payload.subarray(i, i + 64 * 1024));
    await until('the echo of 8 MiB', () => f.received().length >= payload.length, 20_000);
    expect(createHash('sha256').update(f.received()).digest('hex')).to.equal(createHash('sha256').update(payload).digest('hex'));
    f.ws.close();
    await within(f.closed, 5000, 'close');
    await until('the pod-side connection to close', () => echo.connections() === 0 && server.portForward.activeConnections === 0);
  });

  it('serves many forwards at once, each its own connection', async () => {
    const echo = await echoServer();
    await runPod(server, { name: 'echo', ports: { 7: echo.port } });
    const forwards = await Promise.all(Array.from({ length: 20 }, () => forward(kc, 'default', 'echo', 7)));
    const payloads = forwards.map(() => randomBytes(200 * 1024));
    forwards.forEach((f, i) => f.input.write(payloads[i]));
    await until('every echo', () => forwards.every((f, i) => f.received().length >= payloads[i].length), 20_000);
    forwards.forEach((f, i) => expect(f.received().equals(payloads[i]), `forward ${i}`).to.equal(true));
    expect(server.portForward.active).to.equal(20);
    for (const f of forwards) f.ws.close();
    await Promise.all(forwards.map((f) => within(f.closed, 5000, 'close')));
    await until('no forward left', () => server.portForward.active === 0 && echo.connections() === 0);
  });

  it('closes the WebSocket when the pod side closes its connection', async () => {
    const bye = net.createServer((s) => s.end('bye\n'));
    const port = await listen(bye);
    closers.push(() => new Promise((r) => bye.close(r)));
    await runPod(server, { name: 'p', ports: { 9000: port } });
    const f = await forward(kc, 'default', 'p', 9000);
    await within(f.closed, 5000, 'the forward to close');
    expect(f.received().toString()).to.equal('bye\n');
    await until('no forward left', () => server.portForward.active === 0);
  });

  it('closes the pod-side connection when the client goes away, even abruptly', async () => {
    const echo = await echoServer();
    await runPod(server, { name: 'echo', ports: { 7: echo.port } });
    const f = await forward(kc, 'default', 'echo', 7);
    f.input.write('ping');
    await until('the echo', () => f.received().toString() === 'ping');
    expect(echo.connections()).to.equal(1);
    f.ws.terminate();
    await until('the pod-side connection to close', () => echo.connections() === 0 && server.portForward.active === 0);
  });

  it('answers an unregistered port with the kubelet error on the error channel, then closes', async () => {
    const pod = await runPod(server, { name: 'p' });
    const f = await forward(kc, 'default', 'p', 9999);
    await within(f.closed, 5000, 'the forward to close');
    expect(f.errorText()).to.equal(
      `error forwarding port 9999 to pod default/p, uid ${pod.metadata.uid}: failed to connect to localhost:9999 inside the pod's network namespace: dial tcp4 127.0.0.1:9999: connect: connection refused`,
    );
    expect(f.received().length).to.equal(0);
  });

  it('answers a registered port nothing listens on as connection refused', async () => {
    const gone = net.createServer();
    const port = await listen(gone);
    await new Promise((r) => gone.close(r));
    await runPod(server, { name: 'p', ports: { 80: port } });
    const f = await forward(kc, 'default', 'p', 80);
    await within(f.closed, 5000, 'the forward to close');
    expect(f.errorText()).to.match(/^error forwarding port 80 to pod default\/p, uid .*: connect: connection refused$/);
  });

  it('follows register and unregister', async () => {
    const echo = await echoServer();
    await runPod(server, { name: 'p' });
    server.portForward.register('default', 'p', 7, { host: '127.0.0.1', port: echo.port });
    const f = await forward(kc, 'default', 'p', 7);
    f.input.write('x');
    await until('the echo', () => f.received().toString() === 'x');
    server.portForward.unregister('default', 'p');
    const g = await forward(kc, 'default', 'p', 7);
    await within(g.closed, 5000, 'close');
    expect(g.errorText()).to.match(/connection refused$/);
    // The forward opened before stays.
    f.input.write('y');
    await until('the echo', () => f.received().toString() === 'xy');
    f.ws.close();
  });

  it('refuses a missing pod with 404 NotFound naming it', async () => {
    const r = await rawUpgrade(server, '/api/v1/namespaces/default/pods/nope/portforward?ports=80');
    expect(r.status).to.equal(404);
    expect(JSON.parse(r.body)).to.include({ kind: 'Status', reason: 'NotFound', message: 'pods "nope" not found', code: 404 });
    let failure: unknown;
    await forward(kc, 'default', 'nope', 80).catch((err) => (failure = err));
    expect(String((failure as Error)?.message)).to.match(/Unexpected server response: 404/);
  });

  it('refuses a pod without a host, and one not running, with 400', async () => {
    await server.stop();
    server = await startOrchApiServer({ simulateCluster: false });
    await server.create({ apiVersion: 'v1', kind: 'Pod', metadata: { name: 'unscheduled', namespace: 'default' }, spec: { containers: [{ name: 'a', image: 'a' }] } });
    await runPod(server, { name: 'pending', phase: 'Pending' });
    let r = await rawUpgrade(server, '/api/v1/namespaces/default/pods/unscheduled/portforward?ports=80');
    expect(r.status).to.equal(400);
    expect(JSON.parse(r.body)).to.include({ reason: 'BadRequest', message: 'pod unscheduled does not have a host assigned' });
    r = await rawUpgrade(server, '/api/v1/namespaces/default/pods/pending/portforward?ports=80');
    expect(r.status).to.equal(400);
    expect(JSON.parse(r.body).message).to.equal('unable to upgrade connection: pod pending is not running (phase Pending)');
  });

  it('refuses a bad token with 401, bad ports and a missing subprotocol with 400, a plain GET with 400', async () => {
    await runPod(server, { name: 'p' });
    let r = await rawUpgrade(server, '/api/v1/namespaces/default/pods/p/portforward?ports=80', { Authorization: 'Bearer wrong' });
    expect(r.status).to.equal(401);
    expect(JSON.parse(r.body)).to.include({ reason: 'Unauthorized' });
    r = await rawUpgrade(server, '/api/v1/namespaces/default/pods/p/portforward');
    expect([r.status, JSON.parse(r.body).message]).to.deep.equal([400, 'query parameter "ports" is required']);
    r = await rawUpgrade(server, '/api/v1/namespaces/default/pods/p/portforward?ports=http');
    expect(r.status).to.equal(400);
    expect(JSON.parse(r.body).message).to.match(/^unable to parse "http" as a port/);
    r = await rawUpgrade(server, '/api/v1/namespaces/default/pods/p/portforward?ports=0');
    expect(JSON.parse(r.body).message).to.equal('port "0" must be > 0');
    r = await rawUpgrade(server, '/api/v1/namespaces/default/pods/p/portforward?ports=80', { 'Sec-WebSocket-Protocol': 'channel.k8s.io' });
    expect(r.status).to.equal(400);
    expect(JSON.parse(r.body).message).to.match(/requested protocol\(s\) are not supported: \[channel\.k8s\.io\]/);
    r = await rawUpgrade(server, '/api/v1/namespaces/default/pods/p/exec?command=sh');
    expect(r.status).to.equal(404);
    const plain = await request(server, 'GET', '/api/v1/namespaces/default/pods/p/portforward?ports=80');
    expect([plain.status, plain.json.message]).to.deep.equal([400, 'Upgrade request required']);
    const bad = new k8s.KubeConfig();
    bad.loadFromOptions({ ...kc, users: [{ name: 'orch-test', token: 'wrong' }] } as never);
    let failure: unknown;
    await forward(bad, 'default', 'p', 80).catch((err) => (failure = err));
    expect(String((failure as Error)?.message)).to.match(/Unexpected server response: 401/);
  });

  it('records the impersonation headers of the upgrade, each group line apart', async () => {
    await runPod(server, { name: 'p' });
    await rawUpgrade(server, '/api/v1/namespaces/default/pods/p/portforward?ports=80', { 'Impersonate-User': 'jane', 'Impersonate-Uid': 'u-1' });
    expect(server.requests.log.at(-1)!.impersonate).to.deep.equal({ user: 'jane', uid: 'u-1' });
    const plain = await new Promise<number>((resolve, reject) => {
      const req = https.request(new URL('/api/v1/namespaces/default/pods', server.url), { ca: server.caPem, agent: false, headers: { Authorization: `Bearer ${server.token}`, 'Impersonate-User': 'jane', 'Impersonate-Group': ['a', 'b, c'] } }, (res) => {
        res.resume();
        res.on('end', () => resolve(res.statusCode ?? 0));
      });
      req.on('error', reject);
      req.end();
    });
    expect(plain).to.equal(200);
    expect(server.requests.log.at(-1)!.impersonate).to.deep.equal({ user: 'jane', groups: ['a', 'b, c'] });
    await request(server, 'GET', '/api/v1/namespaces');
    expect(server.requests.log.at(-1)).to.not.have.property('impersonate');
  });

  it('ends open forwards on restart and on stop, and takes new ones after a restart', async () => {
    const echo = await echoServer();
    await runPod(server, { name: 'echo', ports: { 7: echo.port } });
    const f = await forward(kc, 'default', 'echo', 7);
    f.input.write('a');
    await until('the echo', () => f.received().toString() === 'a');
    await server.restart();
    await within(f.closed, 5000, 'the forward to end on restart');
    await until('the pod-side connection to close', () => echo.connections() === 0 && server.portForward.active === 0);
    const g = await forward(kc, 'default', 'echo', 7);
    g.input.write('b');
    await until('the echo after restart', () => g.received().toString() === 'b');
    await server.stop();
    await within(g.closed, 5000, 'the forward to end on stop');
    await until('the pod-side connection to close', () => echo.connections() === 0);
    server = await startOrchApiServer();
  });
});
