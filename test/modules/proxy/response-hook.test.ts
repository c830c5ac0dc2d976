import { expect } from 'chai';
import * as net from 'node:net';
import type { AddressInfo } from 'node:net';
import { ROUTER_TYPE } from '../../../src/modules/envoy/well-known';
import { HttpConnectionManager } from '../../../src/modules/proxy/http/connection-manager';
import { HttpFilter, HttpFilterFactory, passRequest } from '../../../src/modules/proxy/http/filter-api';
import { FilterRegistry } from '../../../src/modules/proxy/http/filter-registry';
import { Router } from '../../../src/modules/proxy/http/router';
import { ClusterManager } from '../../../src/modules/proxy/upstream/cluster-manager';
import { HttpApp, request, startHttpApp } from '../../helpers/http-apps';
import { TestContext } from './filters/support';

const TYPE = 'type.googleapis.com/test.Tag';

/** A filter adding `x-trail: <its tag>` (appended) to responses; `fail` makes its hook throw. */
const tagFactory: HttpFilterFactory = {
  typeUrl: TYPE,
  create(name, config): HttpFilter {
    return {
      name,
      onRequest: passRequest,
      onResponse(response, request) {
        if (config.fail) throw new Error('tag failed');
        const trail = response.headers['x-trail'];
        response.headers['x-trail'] = `${trail ? `${trail},` : ''}${config.tag}`;
        response.headers['x-seen'] = `${request.method} ${request.path} ${response.status}`;
      },
    };
  },
};

describe('built-in proxy: HTTP filters see the upstream response (onResponse)', () => {
  let app: HttpApp;
  let router: Router;
  const servers: { server: net.Server; hcm: HttpConnectionManager }[] = [];

  before(async () => {
    app = await startHttpApp('app');
    const clusters = new ClusterManager();
    const endpoint = { endpoint: { address: { socket_address: { address: '127.0.0.1', port_value: app.port } } } };
    clusters.applyClusters(new Map([['app', { name: 'app', type: 'STATIC', load_assignment: { cluster_name: 'app', endpoints: [{ lb_endpoints: [endpoint] }] } }]]));
    router = new Router(clusters);
  });

  after(async () => {
    for (const { server, hcm } of servers) {
      hcm.close();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    }
    router.close();
    await app.close();
  });

  async function serve(filters: object[]): Promise<number> {
    const config = {
      route_config: { name: 'r', virtual_hosts: [{ name: 'all', domains: ['*'], routes: [{ match: { prefix: '/' }, route: { cluster: 'app' } }] }] },
      http_filters: [...filters.map((typed_config, i) => ({ name: `tag${i}`, typed_config: { '@type': TYPE, ...typed_config } })), { name: 'router', typed_config: { '@type': ROUTER_TYPE } }],
    };
    const hcm = new HttpConnectionManager(config, new FilterRegistry([tagFactory], []), new TestContext(), { get: () => undefined }, router, { stripFragmentFromPath: true });
    const server = net.createServer((s) => hcm.accept(s, { remoteAddress: '127.0.0.1', remotePort: s.remotePort ?? 0, localAddress: '127.0.0.1', localPort: s.localPort ?? 0 }));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    servers.push({ server, hcm });
    return (server.address() as AddressInfo).port;
  }

  it('runs the hooks in reverse chain order (Envoy encoder order) on the app answer, with the request', async () => {
    const port = await serve([{ tag: 'first' }, { tag: 'second' }]);
    const answer = await request('127.0.0.1', port, '/a?b=1');
    expect(answer.status).to.equal(200);
    expect(answer.body).to.equal('app GET /a?b=1');
    expect(answer.headers['x-app']).to.equal('app');
    expect(answer.headers['x-trail']).to.equal('second,first');
    expect(answer.headers['x-seen']).to.equal('GET /a?b=1 200');
  });

  it('answers 500 when a hook throws, rather than a half-written response', async () => {
    const port = await serve([{ tag: 'x', fail: true }]);
    const answer = await request('127.0.0.1', port, '/');
    expect(answer.status).to.equal(500);
    expect(answer.body).to.equal('filter error: tag failed');
  });
});
