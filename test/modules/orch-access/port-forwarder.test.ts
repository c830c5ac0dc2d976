import { createHash, randomBytes } from 'node:crypto';
import * as fs from 'node:fs';
import * as http from 'node:http';
import * as net from 'node:net';
import type { Duplex } from 'node:stream';
import { expect } from 'chai';
import { OrchAccess, PortForwardError } from '../../../src/modules/orch-access';
import { OrchApiServer, startOrchApiServer } from '../../helpers/orch-api';
import { runPod } from '../../helpers/orch-mesh';
import { failureOf, kubeconfigOf, listenTcp, meshctlOrchAccess, until } from './support';

/*
 * The port-forwarder as meshctl uses it: OrchAccess from the meshctl container, through the
 * in-process API server's pods/portforward, to real local TCP and HTTP servers.
 */

function readAll(stream: Duplex): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    stream.on('data', (c: Buffer) => chunks.push(c));
    stream.on('end', () => resolve(Buffer.concat(chunks)));
    stream.on('error', reject);
  });
}

describe('orch-access: PortForwarder.connect and request', function () {
  this.timeout(30_000);
  let server: OrchApiServer;
  let access: OrchAccess;
  let cleanup: () => void;
  let kubeconfig: string;
  const closers: (() => unknown)[] = [];

  before(async () => {
    server = await startOrchApiServer();
    ({ file: kubeconfig, cleanup } = kubeconfigOf(server));
  });
  beforeEach(() => {
    access = meshctlOrchAccess({ orchconfig: kubeconfig });
  });
  afterEach(async () => {
    await access.close();
    for (const close of closers.splice(0)) await close();
    await until('no forward left on the server', () => server.portForward.active === 0);
  });
  after(async () => {
    await server.stop();
    cleanup();
  });

  async function serve(handler: http.RequestListener): Promise<number> {
    const app = http.createServer(handler);
    const port = await listenTcp(app);
    closers.push(() => {
      app.closeAllConnections();
      return new Promise((r) => app.close(r));
    });
    return port;
  }

  async function echo(): Promise<{ port: number; open: () => number }> {
    const sockets = new Set<net.Socket>();
    const srv = net.createServer((s) => {
      sockets.add(s);
      s.on('close', () => sockets.delete(s));
      s.on('error', () => undefined);
      s.pipe(s);
    });
    const port = await listenTcp(srv);
    closers.push(() => {
      for (const s of sockets) s.destroy();
      return new Promise((r) => srv.close(r));
    });
    return { port, open: () => sockets.size };
  }

  it('connect: a Duplex carrying the TCP stream, 4 MiB each way intact; destroying it closes the pod side', async () => {
    const e = await echo();
    await runPod(server, { name: 'echo-a', ports: { 7: e.port } });
    const stream = await access.forwarder.connect({ name: 'echo-a', namespace: 'default' }, 7);
    const payload = randomBytes(4 * 1024 * 1024);
    const got: Buffer[] = [];
    let size = 0;
    stream.on('data', (c: Buffer) => {
      got.push(c);
      size += c.length;
    });
    stream.write(payload);
    await until('the echo', () => size >= payload.length, 20_000);
    expect(createHash('sha256').update(Buffer.concat(got)).digest('hex')).to.equal(createHash('sha256').update(payload).digest('hex'));
    stream.destroy();
    await until('the pod-side connection to close', () => e.open() === 0);
  });

  it('connect: the stream ends when the pod side closes; a pod object works as the target', async () => {
    const bye = net.createServer((s) => s.end('bye'));
    const port = await listenTcp(bye);
    closers.push(() => new Promise((r) => bye.close(r)));
    const pod = await runPod(server, { name: 'bye', ports: { 9000: port } });
    const stream = await access.forwarder.connect(pod, 9000);
    expect((await readAll(stream)).toString()).to.equal('bye');
  });

  it('connect: the kubelet error of an unreachable port becomes the stream error, naming pod, namespace and port', async () => {
    await runPod(server, { name: 'quiet', namespace: 'apps' });
    const stream = await access.forwarder.connect({ name: 'quiet', namespace: 'apps' }, 9999);
    const err = await failureOf(readAll(stream));
    expect(err).to.be.instanceOf(PortForwardError);
    expect(err.message).to.match(/^port-forward to port 9999 of pod quiet in namespace apps failed: error forwarding port 9999 to pod apps\/quiet, uid .*connection refused$/);
  });

  it('connect: refusals of the API server are one line with its message (404, 400, 401), an API away names its address', async () => {
    let err = await failureOf(access.forwarder.connect({ name: 'nope', namespace: 'default' }, 80));
    expect(err).to.be.instanceOf(PortForwardError);
    expect(err.message).to.equal('port-forward to port 80 of pod nope in namespace default: 404 NotFound: pods "nope" not found');
    await runPod(server, { name: 'starting', phase: 'Pending' });
    err = await failureOf(access.forwarder.connect({ name: 'starting', namespace: 'default' }, 80));
    expect(err.message).to.equal('port-forward to port 80 of pod starting in namespace default: 400 BadRequest: unable to upgrade connection: pod starting is not running (phase Pending)');
    const wrong = kubeconfig.replace(/\.kubeconfig$/, '-wrong.kubeconfig');
    fs.writeFileSync(wrong, fs.readFileSync(kubeconfig, 'utf8').replace(`token: ${server.token}`, 'token: not-the-token'));
    const stranger = meshctlOrchAccess({ orchconfig: wrong });
    err = await failureOf(stranger.forwarder.connect({ name: 'starting', namespace: 'default' }, 80));
    expect(err.message).to.equal('port-forward to port 80 of pod starting in namespace default: 401 Unauthorized: Unauthorized');
    await stranger.close();
    const away = kubeconfig.replace(/\.kubeconfig$/, '-away.kubeconfig');
    const closed = net.createServer();
    const freePort = await listenTcp(closed);
    await new Promise((r) => closed.close(r));
    fs.writeFileSync(away, fs.readFileSync(kubeconfig, 'utf8').replace(server.url, `https://127.0.0.1:${freePort}`));
    const lost = meshctlOrchAccess({ orchconfig: away });
    err = await failureOf(lost.forwarder.connect({ name: 'starting', namespace: 'default' }, 80));
    expect(err.message).to.match(new RegExp(`^port-forward to port 80 of pod starting in namespace default: cannot reach the orchestrator API at https://127.0.0.1:${freePort}: .*ECONNREFUSED`));
    await lost.close();
  });

  it('connect: refuses bad names and ports before any request', async () => {
    const before = server.requests.log.length;
    expect((await failureOf(access.forwarder.connect({ name: 'a/b?c', namespace: 'default' }, 80))).message).to.equal('"a/b?c" is not a valid pod name (lower-case letters, digits, \'-\' and \'.\')');
    expect((await failureOf(access.forwarder.connect({ name: 'a', namespace: 'Bad_NS' }, 80))).message).to.match(/^"Bad_NS" is not a valid namespace name/);
    expect((await failureOf(access.forwarder.connect({ name: 'a', namespace: 'default' }, 70000))).message).to.equal('pod port must be 1-65535, got 70000');
    expect(server.requests.log.length).to.equal(before);
  });

  it('connect: a reader that falls behind loses nothing (the forward waits for it)', async () => {
    const e = await echo();
    await runPod(server, { name: 'echo-slow', ports: { 7: e.port } });
    const stream = await access.forwarder.connect({ name: 'echo-slow', namespace: 'default' }, 7);
    const payload = randomBytes(6 * 1024 * 1024);
    stream.write(payload);
    // Nobody reads for a while: the data waits (the WebSocket paused), none is dropped.
    await new Promise((r) => setTimeout(r, 300));
    const got: Buffer[] = [];
    let size = 0;
    stream.on('data', (c: Buffer) => {
      got.push(c);
      size += c.length;
    });
    await until('the echo', () => size >= payload.length, 20_000);
    expect(Buffer.concat(got).equals(payload)).to.equal(true);
    stream.destroy();
  });

  it('connect: the API server going away cuts the stream with an error, not a quiet end', async () => {
    const e = await echo();
    await runPod(server, { name: 'echo-cut', ports: { 7: e.port } });
    const stream = await access.forwarder.connect({ name: 'echo-cut', namespace: 'default' }, 7);
    const ended = failureOf(readAll(stream));
    stream.write('x');
    await until('the pod side to be connected', () => e.open() === 1);
    await server.restart();
    const err = await ended;
    expect(err.message).to.equal('port-forward to port 7 of pod echo-cut in namespace default was cut: the connection to the orchestrator API was lost');
    await until('the pod side to close', () => e.open() === 0);
  });

  it('request: HTTP/1.1 through a forward, status, headers and body; a POST body goes through', async () => {
    const port = await serve((req, res) => {
      let body = '';
      req.on('data', (c) => (body += c));
      req.on('end', () => {
        res.setHeader('X-Seen', `${req.method} ${req.url} ${req.headers['x-mine']}`);
        res.statusCode = req.method === 'POST' ? 201 : 200;
        res.end(req.method === 'POST' ? `got ${body}` : 'admin page');
      });
    });
    await runPod(server, { name: 'proxy-1', namespace: 'default', ports: { 15000: port } });
    const pod = { name: 'proxy-1', namespace: 'default' };
    const get = await access.forwarder.request(pod, 15000, { method: 'GET', path: '/stats?usedonly', headers: { 'X-Mine': 'yes' } });
    expect(get.status).to.equal(200);
    expect(get.headers['x-seen']).to.equal('GET /stats?usedonly yes');
    expect(get.body.toString()).to.equal('admin page');
    const post = await access.forwarder.request(pod, 15000, { method: 'POST', path: '/logging?level=debug', body: 'level=debug' });
    expect([post.status, post.body.toString()]).to.deep.equal([201, 'got level=debug']);
    // Each request is its own forward, gone afterwards.
    await until('no forward left', () => server.portForward.active === 0);
    expect(server.requests.count({ verb: 'create', resource: 'pods/portforward' })).to.be.greaterThan(1);
  });

  it('request: many at once', async () => {
    const port = await serve((req, res) => res.end(req.url));
    await runPod(server, { name: 'busy', ports: { 8080: port } });
    const answers = await Promise.all(Array.from({ length: 25 }, (_, i) => access.forwarder.request({ name: 'busy', namespace: 'default' }, 8080, { path: `/n/${i}` })));
    expect(answers.map((a) => a.body.toString())).to.deep.equal(Array.from({ length: 25 }, (_, i) => `/n/${i}`));
  });

  it('request: a pod that never answers times out, naming the request and pod', async () => {
    const port = await serve(() => undefined);
    await runPod(server, { name: 'slow', ports: { 8080: port } });
    const started = Date.now();
    const err = await failureOf(access.forwarder.request({ name: 'slow', namespace: 'default' }, 8080, { path: '/hang', timeoutMs: 400 }));
    expect(err).to.be.instanceOf(PortForwardError);
    expect(err.message).to.equal('GET /hang on port 8080 of pod slow in namespace default: no answer within 400 ms');
    expect(Date.now() - started).to.be.lessThan(3000);
  });

  it('request: an unreachable port and a pod closing without an answer are clear errors', async () => {
    await runPod(server, { name: 'closed', ports: {} });
    let err = await failureOf(access.forwarder.request({ name: 'closed', namespace: 'default' }, 15000, { path: '/stats' }));
    expect(err.message).to.match(/^port-forward to port 15000 of pod closed in namespace default failed: error forwarding port 15000 .*connection refused$/);
    const rude = net.createServer((s) => s.once('data', () => s.destroy()));
    const port = await listenTcp(rude);
    closers.push(() => new Promise((r) => rude.close(r)));
    await runPod(server, { name: 'rude', ports: { 80: port } });
    err = await failureOf(access.forwarder.request({ name: 'rude', namespace: 'default' }, 80, { path: '/' }));
    expect(err.message).to.equal('GET / on port 80 of pod rude in namespace default: the connection closed before an answer came');
  });

  it('request: bodies over 64 MiB are refused either way', async () => {
    const huge = Buffer.alloc(64 * 1024 * 1024 + 1);
    let err = await failureOf(access.forwarder.request({ name: 'any', namespace: 'default' }, 80, { method: 'PUT', path: '/', body: huge }));
    expect(err.message).to.equal('PUT / on port 80 of pod any in namespace default: the request body of 67108865 bytes is more than the 67108864 bytes allowed');
    const chunk = Buffer.alloc(1024 * 1024, 'x');
    const port = await serve((_req, res) => {
      let sent = 0;
      const more = () => {
        while (sent < 65 && res.write(chunk)) sent++;
        if (sent >= 65) res.end();
        else res.once('drain', () => (sent++, more()));
      };
      res.on('error', () => undefined);
      more();
    });
    await runPod(server, { name: 'flood', ports: { 80: port } });
    err = await failureOf(access.forwarder.request({ name: 'flood', namespace: 'default' }, 80, { path: '/dump' }));
    expect(err.message).to.equal('GET /dump on port 80 of pod flood in namespace default: the answer is more than the 67108864 bytes allowed');
  });
});
