import { expect } from 'chai';
import { createHash } from 'node:crypto';
import * as http from 'node:http';
import * as net from 'node:net';
import type { AddressInfo } from 'node:net';
import { ROUTER_TYPE } from '../../../src/modules/envoy/well-known';
import { HttpConnectionManager } from '../../../src/modules/proxy/http/connection-manager';
import { FilterRegistry } from '../../../src/modules/proxy/http/filter-registry';
import { Router } from '../../../src/modules/proxy/http/router';
import { ClusterManager } from '../../../src/modules/proxy/upstream/cluster-manager';
import { TestContext } from './filters/support';
import { unansweredEndpoint, UnansweredEndpoint } from '../../helpers/unanswered-endpoint';

/** What the upstream app saw of one request. */
interface Seen {
  method: string;
  url: string;
  headers: http.IncomingHttpHeaders;
  bodyBytes: number;
  bodySha: string;
}

const STREAM_CHUNK = Buffer.alloc(64 * 1024, 'x');
const STREAM_CHUNKS = 128; // 8 MiB, far more than a socket buffer: the proxy must follow the pace

/**
 * The router's upstream side as a user meets it: bodies both ways, streaming, keep-alive, the
 * route timeout, a refused connection, a reset, and a client that goes away mid-answer.
 */
describe('built-in proxy router: the upstream exchange', () => {
  let app: http.Server;
  let appPort: number;
  let closedPort: number;
  let router: Router;
  let proxyPort: number;
  let hcm: HttpConnectionManager;
  let proxy: net.Server;
  const upstreamConnections = new Set<net.Socket>();
  let connectionsSeen = 0;
  let lastAborted: Promise<void> | undefined;
  let unanswered: UnansweredEndpoint;

  before(async () => {
    unanswered = await unansweredEndpoint();
    app = http.createServer((req, res) => {
      const hash = createHash('sha256');
      let bytes = 0;
      req.on('data', (chunk: Buffer) => {
        bytes += chunk.length;
        hash.update(chunk);
      });
      if (req.url === '/stream') {
        let i = 0;
        const more = (): void => {
          while (i < STREAM_CHUNKS) {
            i++;
            if (!res.write(STREAM_CHUNK)) return void res.once('drain', more);
          }
          res.end();
        };
        res.writeHead(200, { 'content-type': 'application/octet-stream' });
        return more();
      }
      if (req.url === '/hold') {
        // Headers and some body, then nothing until the client goes away.
        lastAborted = new Promise((resolve) => res.on('close', () => resolve()));
        res.writeHead(200, { 'content-type': 'text/plain' });
        res.write('started');
        return;
      }
      if (req.url === '/slow') return void setTimeout(() => res.end('late'), 1_500);
      if (req.url === '/reset') return void req.socket.destroy();
      req.on('end', () => {
        const seen: Seen = { method: req.method ?? '', url: req.url ?? '', headers: req.headers, bodyBytes: bytes, bodySha: hash.digest('hex') };
        const body = JSON.stringify(seen);
        res.setHeader('set-cookie', ['a=1', 'b=2']);
        res.writeHead(201, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) });
        res.end(body);
      });
    });
    app.on('connection', (socket: net.Socket) => {
      connectionsSeen++;
      upstreamConnections.add(socket);
      socket.on('close', () => upstreamConnections.delete(socket));
    });
    await new Promise<void>((resolve) => app.listen(0, '127.0.0.1', resolve));
    appPort = (app.address() as AddressInfo).port;
    const closed = net.createServer();
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
    closedPort = (closed.address() as AddressInfo).port;
    await new Promise<void>((resolve) => closed.close(() => resolve()));

    const clusters = new ClusterManager();
    const staticCluster = (name: string, port: number): object => ({
      name,
      type: 'STATIC',
      load_assignment: { cluster_name: name, endpoints: [{ lb_endpoints: [{ endpoint: { address: { socket_address: { address: '127.0.0.1', port_value: port } } } }] }] },
    });
    clusters.applyClusters(new Map([
      ['app', staticCluster('app', appPort)],
      ['gone', staticCluster('gone', closedPort)],
      ['unanswered', { ...staticCluster('unanswered', unanswered.port), connect_timeout: { seconds: 0, nanos: 300_000_000 } }],
    ]) as never);
    router = new Router(clusters);
    const config = {
      route_config: {
        name: 'r',
        virtual_hosts: [{
          name: 'all',
          domains: ['*'],
          routes: [
            { match: { prefix: '/gone' }, route: { cluster: 'gone' } },
            { match: { prefix: '/unanswered' }, route: { cluster: 'unanswered' } },
            { match: { prefix: '/slow' }, route: { cluster: 'app', timeout: { seconds: 0, nanos: 200_000_000 } } },
            { match: { prefix: '/bad-timeout' }, route: { cluster: 'app', timeout: '0.2s' } },
            { match: { prefix: '/' }, route: { cluster: 'app' } },
          ],
        }],
      },
      http_filters: [{ name: 'router', typed_config: { '@type': ROUTER_TYPE } }],
    };
    hcm = new HttpConnectionManager(config, new FilterRegistry([], []), new TestContext(), { get: () => undefined }, router, { stripFragmentFromPath: true });
    proxy = net.createServer((s) => hcm.accept(s, { remoteAddress: '127.0.0.1', remotePort: s.remotePort ?? 0, localAddress: '127.0.0.1', localPort: s.localPort ?? 0 }));
    await new Promise<void>((resolve) => proxy.listen(0, '127.0.0.1', resolve));
    proxyPort = (proxy.address() as AddressInfo).port;
  });

  after(async () => {
    hcm.close();
    router.close();
    await new Promise<void>((resolve) => proxy.close(() => resolve()));
    app.closeAllConnections();
    await new Promise<void>((resolve) => app.close(() => resolve()));
    await unanswered.close();
  });

  interface Reply {
    status: number;
    headers: http.IncomingHttpHeaders;
    body: Buffer;
  }

  function send(path: string, options: { method?: string; headers?: Record<string, string>; body?: Buffer | Buffer[]; agent?: http.Agent } = {}): Promise<Reply> {
    return new Promise((resolve, reject) => {
      const req = http.request({ host: '127.0.0.1', port: proxyPort, path, method: options.method ?? 'GET', headers: options.headers, agent: options.agent ?? false }, (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks) }));
        res.on('error', reject);
      });
      req.on('error', reject);
      const body = options.body;
      if (Array.isArray(body)) {
        for (const part of body) req.write(part);
        req.end();
      } else req.end(body);
    });
  }

  const sha = (b: Buffer): string => createHash('sha256').update(b).digest('hex');

  it('forwards a request body with its length, and the answer with its status and repeated headers', async () => {
    const body = Buffer.alloc(300_000, 'b');
    const reply = await send('/upload?x=1', { method: 'POST', headers: { 'content-type': 'text/plain', 'content-length': String(body.length) }, body });
    expect(reply.status).to.equal(201);
    expect(reply.headers['set-cookie']).to.deep.equal(['a=1', 'b=2']);
    const seen = JSON.parse(reply.body.toString()) as Seen;
    expect(seen).to.include({ method: 'POST', url: '/upload?x=1', bodyBytes: body.length, bodySha: sha(body) });
    expect(seen.headers['content-length']).to.equal(String(body.length));
    expect(seen.headers['x-forwarded-proto']).to.equal('http');
    expect(seen.headers['x-request-id']).to.be.a('string');
  });

  it('streams a chunked request body on as chunked, and answers 100 Continue itself without passing Expect on', async () => {
    const parts = [Buffer.from('one,'), Buffer.from('two,'), Buffer.alloc(100_000, 'c')];
    const reply = await send('/chunked', { method: 'PUT', headers: { 'transfer-encoding': 'chunked', expect: '100-continue' }, body: parts });
    expect(reply.status).to.equal(201);
    const seen = JSON.parse(reply.body.toString()) as Seen;
    expect(seen.bodySha).to.equal(sha(Buffer.concat(parts)));
    expect(seen.headers['transfer-encoding']).to.equal('chunked');
    expect(seen.headers).not.to.have.property('expect');
  });

  it('streams a large answer at the client pace, intact', async () => {
    const reply = await send('/stream');
    expect(reply.status).to.equal(200);
    expect(reply.body.length).to.equal(STREAM_CHUNK.length * STREAM_CHUNKS);
    expect(sha(reply.body)).to.equal(sha(Buffer.concat(Array.from({ length: STREAM_CHUNKS }, () => STREAM_CHUNK))));
  });

  it('keeps its upstream connection for the next requests', async () => {
    const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
    try {
      await send('/warm', { agent });
      const before = connectionsSeen;
      for (let i = 0; i < 20; i++) expect((await send(`/again/${i}`, { agent })).status).to.equal(201);
      expect(connectionsSeen - before).to.equal(0);
    } finally {
      agent.destroy();
    }
  });

  it('answers HEAD with the upstream headers and no body', async () => {
    const reply = await send('/head', { method: 'HEAD' });
    expect(reply.status).to.equal(201);
    expect(reply.body.length).to.equal(0);
  });

  it('answers 504 when the route timeout passes before the answer starts', async () => {
    const started = Date.now();
    const reply = await send('/slow');
    expect(reply.status).to.equal(504);
    expect(reply.body.toString()).to.equal('upstream request timeout');
    expect(Date.now() - started).to.be.lessThan(1_400);
  });

  it('answers 500 naming the fault when a route cannot be acted on, rather than leaving the request hanging', async () => {
    const reply = await send('/bad-timeout');
    expect(reply.status).to.equal(500);
    expect(reply.body.toString()).to.match(/^route error: .*route\.timeout/);
  });

  it('answers 503 naming a connection failure when the endpoint refuses, and a remote reset when it hangs up', async () => {
    const refused = await send('/gone');
    expect(refused.status).to.equal(503);
    expect(refused.body.toString()).to.equal('upstream connect error or disconnect/reset before headers. reset reason: connection failure');
    const reset = await send('/reset');
    expect(reset.status).to.equal(503);
    expect(reset.body.toString()).to.equal('upstream connect error or disconnect/reset before headers. reset reason: remote reset');
  });

  it("answers 503 naming a connection timeout once the cluster's connect_timeout passes without a connection", async () => {
    const started = Date.now();
    const reply = await send('/unanswered');
    const tookMs = Date.now() - started;
    expect(reply.status).to.equal(503);
    expect(reply.body.toString()).to.equal('upstream connect error or disconnect/reset before headers. reset reason: connection timeout');
    expect(tookMs, 'the cluster says 0.3 s').to.be.within(250, 5_000);
  });

  it('abandons the upstream request when the client goes away mid-answer', async () => {
    await new Promise<void>((resolve, reject) => {
      const req = http.request({ host: '127.0.0.1', port: proxyPort, path: '/hold', agent: false }, (res) => {
        res.once('data', () => {
          req.destroy();
          resolve();
        });
      });
      req.on('error', () => undefined);
      req.on('close', () => resolve());
      setTimeout(() => reject(new Error('no body began')), 5_000).unref();
      req.end();
    });
    expect(lastAborted, 'the app got the request').not.to.equal(undefined);
    await Promise.race([lastAborted, new Promise((_, reject) => setTimeout(() => reject(new Error('the upstream request was not abandoned')), 5_000).unref())]);
  });
});
