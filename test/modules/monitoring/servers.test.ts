import { expect } from 'chai';
import * as http from 'node:http';
import * as net from 'node:net';
import * as os from 'node:os';
import {
  configzHandler,
  DebugHandler,
  DebugHttpServer,
  DebugHttpServerOptions,
  pluginsHandler,
  registryzHandler,
} from '../../../src/modules/debug';
import {
  DaemonMetrics,
  isLoopbackAddress,
  ListenAddress,
  MonitoringServer,
  parseListenAddress,
} from '../../../src/modules/monitoring';

interface Reply {
  status: number;
  headers: http.IncomingHttpHeaders;
  body: string;
}

/** One real HTTP request on a fresh connection (no pooling, so servers stop at once). */
function request(host: string, port: number, path: string, options: { method?: string; agent?: http.Agent } = {}): Promise<Reply> {
  return new Promise((resolve, reject) => {
    const req = http.request({ host, port, path, method: options.method ?? 'GET', agent: options.agent ?? false }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => (body += chunk));
      res.on('end', () => resolve({ status: res.statusCode!, headers: res.headers, body }));
    });
    req.on('error', reject);
    req.end();
  });
}

const LOCAL: ListenAddress = { host: '127.0.0.1', port: 0 };

describe('monitoring: parseListenAddress', () => {
  const good: [string, ListenAddress][] = [
    [':15014', { host: '', port: 15014 }],
    ['127.0.0.1:0', { host: '127.0.0.1', port: 0 }],
    ['[::1]:8080', { host: '::1', port: 8080 }],
    ['[::]:15010', { host: '::', port: 15010 }],
    ['localhost:9876', { host: 'localhost', port: 9876 }],
    ['meshd.mesh-system.svc:65535', { host: 'meshd.mesh-system.svc', port: 65535 }],
  ];
  for (const [addr, want] of good) {
    it(`parses ${addr}`, () => expect(parseListenAddress(addr, 'httpAddr')).to.deep.equal(want));
  }

  const bad: [string, RegExp][] = [
    [':abc', /^invalid --monitoringAddr ":abc": port must be a number from 0 to 65535$/],
    [':65536', /port must be a number from 0 to 65535/],
    [':-1', /port must be a number from 0 to 65535/],
    ['127.0.0.1:', /port must be a number from 0 to 65535/],
    ['15014', /missing port/],
    ['', /missing port/],
    ['::1:8080', /too many colons/],
    ['[::1]8080', /missing port/],
    ['[::1:8080', /missing "\]"/],
    ['[127.0.0.1]:80', /not an IPv6 address/],
    ['300.1.1.1:80', /not an IP address or host name/],
    ['bad host:80', /not an IP address or host name/],
  ];
  for (const [addr, want] of bad) {
    it(`rejects ${JSON.stringify(addr)} naming the flag and the value`, () => {
      expect(() => parseListenAddress(addr, '--monitoringAddr'))
        .to.throw(want)
        .with.property('message')
        .that.includes(`invalid --monitoringAddr ${JSON.stringify(addr)}: `);
    });
  }
});

describe('monitoring: MonitoringServer', () => {
  let server: MonitoringServer | undefined;
  afterEach(async () => {
    await server?.stop();
    server = undefined;
  });

  it('serves /metrics in the Prometheus text format', async () => {
    const metrics = new DaemonMetrics({ component: 'pilot-discovery', version: '1.2.3' });
    metrics.xdsPushes.inc({ type: 'eds' });
    server = new MonitoringServer({ address: LOCAL, metrics });
    const { host, port } = await server.start();
    expect(host).to.equal('127.0.0.1');
    expect(port).to.be.greaterThan(0);

    const res = await request(host, port, '/metrics');
    expect(res.status).to.equal(200);
    expect(res.headers['content-type']).to.equal('text/plain; version=0.0.4; charset=utf-8');
    expect(res.body).to.include('# TYPE pilot_xds_pushes counter');
    expect(res.body).to.include('pilot_xds_pushes{type="eds"} 1');
    expect(res.body).to.include('# TYPE meshd_uptime_seconds gauge');

    expect((await request(host, port, '/')).status).to.equal(404);
    expect((await request(host, port, '/metrics/x')).status).to.equal(404);
    const post = await request(host, port, '/metrics', { method: 'POST' });
    expect(post.status).to.equal(405);
    expect(post.headers.allow).to.equal('GET, HEAD');
  });

  it('reports a port in use naming the address', async () => {
    server = new MonitoringServer({ address: LOCAL, metrics: new DaemonMetrics({ component: 'c', version: 'v' }) });
    const { port } = await server.start();
    const second = new MonitoringServer({ address: { host: '127.0.0.1', port }, metrics: new DaemonMetrics({ component: 'c', version: 'v' }) });
    let error: (Error & { code?: string }) | undefined;
    await second.start().catch((err: Error) => (error = err));
    expect(error?.message).to.include(`monitoring server: cannot listen on 127.0.0.1:${port}`);
    expect(error?.code).to.equal('EADDRINUSE');
  });

  it('with localhostOnly answers loopback clients and refuses others with 403', async function () {
    const external = Object.values(os.networkInterfaces())
      .flat()
      .find((i) => i && !i.internal && i.family === 'IPv4');
    if (!external) this.skip();
    // All interfaces, so the same server is reachable over loopback and over the external address.
    server = new MonitoringServer({ address: { host: '', port: 0 }, metrics: new DaemonMetrics({ component: 'c', version: 'v' }), localhostOnly: true });
    const { port } = await server.start();
    expect((await request('127.0.0.1', port, '/metrics')).status).to.equal(200);
    const refused = await request(external!.address, port, '/metrics');
    expect(refused.status).to.equal(403);
    expect(refused.body).to.include('METRICS_LOCALHOST_ACCESS_ONLY');
  });

  it('without localhostOnly answers any client', async function () {
    const external = Object.values(os.networkInterfaces())
      .flat()
      .find((i) => i && !i.internal && i.family === 'IPv4');
    if (!external) this.skip();
    server = new MonitoringServer({ address: { host: '', port: 0 }, metrics: new DaemonMetrics({ component: 'c', version: 'v' }) });
    const { port } = await server.start();
    expect((await request(external!.address, port, '/metrics')).status).to.equal(200);
  });

  it('hands other paths to a fallback, e.g. the debug interface on the monitoring port', async () => {
    const debug = new DebugHttpServer({
      address: LOCAL,
      isReady: () => true,
      debugEnabled: true,
      handlers: [{ path: '/debug/syncz', description: 's', handle: () => ({ json: ['synced'] }) }],
    });
    server = new MonitoringServer({ address: LOCAL, metrics: new DaemonMetrics({ component: 'c', version: 'v' }), fallback: debug.listener });
    const { host, port } = await server.start();
    expect((await request(host, port, '/metrics')).status).to.equal(200);
    expect(JSON.parse((await request(host, port, '/debug/syncz')).body)).to.deep.equal(['synced']);
    expect((await request(host, port, '/nothing')).status).to.equal(404);
  });

  it('recognises loopback addresses, including IPv4-mapped ones', () => {
    for (const a of ['127.0.0.1', '127.8.9.10', '::1', '::ffff:127.0.0.1', '::FFFF:127.0.0.2']) expect(isLoopbackAddress(a), a).to.equal(true);
    for (const a of ['10.0.0.1', '::ffff:10.0.0.1', '::', '0.0.0.0', 'fe80::1', '', undefined]) expect(isLoopbackAddress(a), String(a)).to.equal(false);
  });
});

describe('debug: DebugHttpServer', () => {
  let server: DebugHttpServer | undefined;
  afterEach(async () => {
    await server?.stop();
    server = undefined;
  });

  async function start(options: Partial<DebugHttpServerOptions>): Promise<ListenAddress> {
    server = new DebugHttpServer({ address: LOCAL, isReady: () => true, debugEnabled: true, ...options });
    return server.start();
  }

  it('answers /ready with 503 and a reason until ready, then 200', async () => {
    let ready = false;
    const { host, port } = await start({ isReady: () => (ready ? true : { ready: false, reason: 'config not synced' }) });
    let res = await request(host, port, '/ready');
    expect(res.status).to.equal(503);
    expect(res.body).to.equal('not ready: config not synced\n');
    ready = true;
    res = await request(host, port, '/ready');
    expect(res.status).to.equal(200);
    expect(res.body).to.equal('ready\n');
  });

  it('serves debug handlers as pretty-printed JSON or text, with the query, and lists them at /debug', async () => {
    const handlers: DebugHandler[] = [
      { path: '/debug/syncz', description: 'sync status', handle: (q) => ({ json: { proxy: q.get('proxy'), synced: true } }) },
      { path: '/debug/echo', description: 'echo text', handle: async (q) => ({ status: 202, text: `hello ${q.get('name')}` }) },
    ];
    const { host, port } = await start({ handlers });

    const syncz = await request(host, port, '/debug/syncz?proxy=a.default');
    expect(syncz.status).to.equal(200);
    expect(syncz.headers['content-type']).to.equal('application/json');
    expect(syncz.body).to.equal('{\n  "proxy": "a.default",\n  "synced": true\n}\n');

    const echo = await request(host, port, '/debug/echo?name=mesh');
    expect(echo.status).to.equal(202);
    expect(echo.headers['content-type']).to.equal('text/plain; charset=utf-8');
    expect(echo.body).to.equal('hello mesh');

    const index = await request(host, port, '/debug');
    expect(index.status).to.equal(200);
    expect(JSON.parse(index.body)).to.deep.equal([
      { path: '/debug/echo', description: 'echo text' },
      { path: '/debug/syncz', description: 'sync status' },
    ]);
    expect((await request(host, port, '/debug/nothing')).status).to.equal(404);
    expect((await request(host, port, '/elsewhere')).status).to.equal(404);
  });

  it('answers /debug/* with 404 when ENABLE_DEBUG_ON_HTTP is false, /ready still works', async () => {
    const { host, port } = await start({
      debugEnabled: false,
      handlers: [{ path: '/debug/syncz', description: 'sync status', handle: () => ({ json: {} }) }],
    });
    for (const path of ['/debug', '/debug/syncz', '/debug/unknown']) {
      const res = await request(host, port, path);
      expect(res.status, path).to.equal(404);
      expect(res.body, path).to.include('debug interface is disabled by ENABLE_DEBUG_ON_HTTP=false');
    }
    expect((await request(host, port, '/ready')).status).to.equal(200);
  });

  it('turns a throwing handler into a 500 with its message and keeps serving', async () => {
    const seen: string[] = [];
    const { host, port } = await start({
      handlers: [
        { path: '/debug/boom', description: 'throws', handle: () => { throw new Error('store exploded'); } },
        { path: '/debug/reject', description: 'rejects', handle: async () => { throw new Error('async failure'); } },
        { path: '/debug/cyclic', description: 'unserialisable', handle: () => { const o: Record<string, unknown> = {}; o.self = o; return { json: o }; } },
      ],
      onHandlerError: (path) => seen.push(path),
    });
    const boom = await request(host, port, '/debug/boom');
    expect(boom.status).to.equal(500);
    expect(boom.body).to.include('store exploded');
    const rejected = await request(host, port, '/debug/reject');
    expect(rejected.status).to.equal(500);
    expect(rejected.body).to.include('async failure');
    expect((await request(host, port, '/debug/cyclic')).status).to.equal(500);
    expect(seen).to.deep.equal(['/debug/boom', '/debug/reject', '/debug/cyclic']);
    expect((await request(host, port, '/ready')).status).to.equal(200);
  });

  it('answers methods other than GET with 405', async () => {
    const { host, port } = await start({ handlers: [{ path: '/debug/syncz', description: 's', handle: () => ({ json: {} }) }] });
    for (const method of ['POST', 'PUT', 'DELETE']) {
      const res = await request(host, port, '/debug/syncz', { method });
      expect(res.status, method).to.equal(405);
      expect(res.headers.allow).to.equal('GET, HEAD');
    }
    expect((await request(host, port, '/ready', { method: 'POST' })).status).to.equal(405);
  });

  it('refuses handler paths outside /debug/ and duplicates', () => {
    const h = (path: string): DebugHandler => ({ path, description: '', handle: () => ({}) });
    expect(() => new DebugHttpServer({ address: LOCAL, isReady: () => true, debugEnabled: true, handlers: [h('/syncz')] })).to.throw(/must start with \/debug\//);
    expect(() => new DebugHttpServer({ address: LOCAL, isReady: () => true, debugEnabled: true, handlers: [h('/debug/a'), h('/debug/a')] })).to.throw(/twice/);
  });

  it('stops promptly while a client holds an idle keep-alive connection', async () => {
    const { host, port } = await start({});
    const agent = new http.Agent({ keepAlive: true });
    try {
      expect((await request(host, port, '/ready', { agent })).status).to.equal(200);
      const started = Date.now();
      await server!.stop();
      expect(Date.now() - started).to.be.lessThan(1000);
      // Closed for real: a new connection is refused.
      await new Promise<void>((resolve, reject) => {
        const socket = net.connect(port, host);
        socket.on('connect', () => reject(new Error('still listening')));
        socket.on('error', () => resolve());
      });
    } finally {
      agent.destroy();
    }
  });
});

describe('debug: handlers', () => {
  let server: DebugHttpServer | undefined;
  afterEach(async () => {
    await server?.stop();
    server = undefined;
  });

  it('serves configz, registryz and plugins from their callbacks', async () => {
    const vs = { apiVersion: 'networking.mesh.io/v1', kind: 'VirtualService', metadata: { name: 'r', namespace: 'default' }, spec: { hosts: ['r'] } };
    const dr = { apiVersion: 'networking.mesh.io/v1', kind: 'DestinationRule', metadata: { name: 'd', namespace: 'default' }, spec: { host: 'r' } };
    const snapshot = new Map<string, object[]>([
      ['VirtualService', [vs]],
      ['DestinationRule', [dr]],
    ]);
    const FilterToken = Symbol.for('mesh.HttpFilterContributor');
    const plugins = [
      {
        name: 'alpn-filter',
        source: 'built-in',
        enabledBy: 'PILOT_ENABLE_ALPN_FILTER',
        enabled: true,
        reason: 'PILOT_ENABLE_ALPN_FILTER=true (default)',
        description: 'ALPN filter',
        classes: [class AlpnFilter {}],
        provides: [FilterToken],
      },
    ];
    server = new DebugHttpServer({
      address: LOCAL,
      isReady: () => true,
      debugEnabled: true,
      handlers: [configzHandler(() => snapshot), registryzHandler(() => [{ hostname: 'r.default.svc.cluster.local', ports: [80] }]), pluginsHandler(() => plugins)],
    });
    const { host, port } = await server.start();

    const configz = await request(host, port, '/debug/configz');
    expect(configz.status).to.equal(200);
    expect(Object.keys(JSON.parse(configz.body))).to.deep.equal(['DestinationRule', 'VirtualService']);
    expect(JSON.parse(configz.body)).to.deep.equal({ DestinationRule: [dr], VirtualService: [vs] });
    expect(JSON.parse((await request(host, port, '/debug/configz?kind=VirtualService')).body)).to.deep.equal({ VirtualService: [vs] });

    const registryz = await request(host, port, '/debug/registryz');
    expect(JSON.parse(registryz.body)).to.deep.equal([{ hostname: 'r.default.svc.cluster.local', ports: [80] }]);

    const listed = JSON.parse((await request(host, port, '/debug/plugins')).body);
    expect(listed).to.deep.equal([
      {
        name: 'alpn-filter',
        source: 'built-in',
        enabled: true,
        enabledBy: 'PILOT_ENABLE_ALPN_FILTER',
        reason: 'PILOT_ENABLE_ALPN_FILTER=true (default)',
        description: 'ALPN filter',
        provides: ['mesh.HttpFilterContributor'],
      },
    ]);

    const index = JSON.parse((await request(host, port, '/debug')).body) as { path: string }[];
    expect(index.map((h) => h.path)).to.deep.equal(['/debug/configz', '/debug/plugins', '/debug/registryz']);
  });
});
