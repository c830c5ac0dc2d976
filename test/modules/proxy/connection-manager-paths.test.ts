/**
 * The HTTP connection manager's path handling on real connections: for each HCM option and
 * the proxy's fragment flag, what a raw request line gets back (400, 307 with its location,
 * 404), which route and RBAC decision the normalized path gets, and the request line the app
 * receives.
 */
import { expect } from 'chai';
import * as net from 'node:net';
import type { AddressInfo } from 'node:net';
import { HTTP_RBAC_TYPE_URL, rbacHttpFilterFactory } from '../../../src/modules/proxy/filters';
import { HttpConnectionManager } from '../../../src/modules/proxy/http/connection-manager';
import { FilterRegistry, HCM_TYPE, ROUTER_TYPE } from '../../../src/modules/proxy/http/filter-registry';
import { Router } from '../../../src/modules/proxy/http/router';
import { ClusterManager } from '../../../src/modules/proxy/upstream/cluster-manager';
import { HttpApp, startHttpApp } from '../../helpers/http-apps';
import { rawRequest } from '../../helpers/raw-http';
import { decoded, TestContext } from './filters/support';

interface Served {
  port: number;
  close(): Promise<void>;
}

describe('built-in proxy: the HTTP connection manager normalizes the path before filters, routing and the upstream request', () => {
  let app: HttpApp;
  let clusters: ClusterManager;
  let router: Router;
  const served: Served[] = [];

  before(async () => {
    app = await startHttpApp('app');
    clusters = new ClusterManager();
    clusters.applyClusters(
      new Map([
        [
          'app',
          {
            name: 'app',
            type: 'STATIC',
            load_assignment: { cluster_name: 'app', endpoints: [{ lb_endpoints: [{ endpoint: { address: { socket_address: { address: '127.0.0.1', port_value: app.port } } } }] }] },
          },
        ],
      ]),
    );
    router = new Router(clusters);
  });

  after(async () => {
    for (const s of served) await s.close();
    router.close();
    await app.close();
  });

  /**
   * An HCM with `fields` in front of the app: RBAC denies paths starting with /secret, the route
   * `/admin` (exact) answers itself, everything else goes to the app.
   */
  async function serve(fields: object, stripFragmentFromPath = true): Promise<number> {
    const config = decoded(HCM_TYPE, {
      stat_prefix: 'test',
      ...fields,
      route_config: {
        name: 'test',
        virtual_hosts: [
          {
            name: 'all',
            domains: ['*'],
            routes: [
              { match: { path: '/admin' }, direct_response: { status: 200, body: { inline_string: 'admin route' } } },
              { match: { prefix: '/' }, route: { cluster: 'app' } },
            ],
          },
        ],
      },
      http_filters: [
        {
          name: 'envoy.filters.http.rbac',
          typed_config: {
            '@type': HTTP_RBAC_TYPE_URL,
            rules: { action: 'DENY', policies: { secret: { permissions: [{ url_path: { path: { prefix: '/secret' } } }], principals: [{ any: true }] } } },
          },
        },
        { name: 'envoy.filters.http.router', typed_config: { '@type': ROUTER_TYPE } },
      ],
    });
    const hcm = new HttpConnectionManager(config, new FilterRegistry([rbacHttpFilterFactory], []), new TestContext(), { get: () => undefined }, router, {
      stripFragmentFromPath,
    });
    const server = net.createServer((socket) =>
      hcm.accept(socket, { remoteAddress: '127.0.0.1', remotePort: socket.remotePort ?? 0, localAddress: '127.0.0.1', localPort: socket.localPort ?? 0 }),
    );
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const port = (server.address() as AddressInfo).port;
    served.push({
      port,
      close: () =>
        new Promise<void>((resolve) => {
          hcm.close();
          server.close(() => resolve());
        }),
    });
    return port;
  }

  /** Status and what the app saw (its echo `app GET <url>`), or the local reply's body. */
  async function send(port: number, target: string): Promise<{ status: number; body: string; location?: string }> {
    const answer = await rawRequest('127.0.0.1', port, target, { host: 'app.example.com' });
    return { status: answer.status, body: answer.body, ...(answer.headers.location !== undefined ? { location: answer.headers.location } : {}) };
  }

  it('with normalize_path: dot segments, encoded dots and unreserved characters resolve before RBAC, routing and the app', async () => {
    const port = await serve({ normalize_path: { value: true } });
    expect(await send(port, '/public/../admin')).to.deep.equal({ status: 200, body: 'admin route' });
    expect(await send(port, '/public/%2e%2E/admin')).to.deep.equal({ status: 200, body: 'admin route' });
    expect(await send(port, '/%61dmin')).to.deep.equal({ status: 200, body: 'admin route' });
    expect(await send(port, '/./secret')).to.deep.equal({ status: 403, body: 'RBAC: access denied' });
    expect(await send(port, '/x/..\\secret')).to.deep.equal({ status: 403, body: 'RBAC: access denied' });
    expect(await send(port, '/%73ecret')).to.deep.equal({ status: 403, body: 'RBAC: access denied' });
    expect(await send(port, '/a/./b/../c?x=/../%73#frag')).to.deep.equal({ status: 200, body: 'app GET /a/c?x=/../%73' });
    expect(await send(port, '/a//b')).to.deep.equal({ status: 200, body: 'app GET /a//b' });
    expect(await send(port, '/bad%00path')).to.deep.equal({ status: 400, body: '' });
    expect(app.requests.some((r) => r.url.includes('%00')), 'the rejected request never reached the app').to.equal(false);
  });

  it('without normalize_path (Envoy default) the path goes through as received, fragment aside', async () => {
    const port = await serve({});
    expect(await send(port, '/public/../admin')).to.deep.equal({ status: 200, body: 'app GET /public/../admin' });
    expect(await send(port, '/%73ecret#x')).to.deep.equal({ status: 200, body: 'app GET /%73ecret' });
  });

  it('merge_slashes merges // after normalization', async () => {
    const port = await serve({ normalize_path: { value: true }, merge_slashes: true });
    expect(await send(port, '//secret')).to.deep.equal({ status: 403, body: 'RBAC: access denied' });
    expect(await send(port, '/a//b/\\c?q=//')).to.deep.equal({ status: 200, body: 'app GET /a/b/c?q=//' });
  });

  it('path_with_escaped_slashes_action: KEEP_UNCHANGED, REJECT_REQUEST (400), UNESCAPE_AND_REDIRECT (307), UNESCAPE_AND_FORWARD', async () => {
    const keep = await serve({ normalize_path: { value: true }, path_with_escaped_slashes_action: 'KEEP_UNCHANGED' });
    const reject = await serve({ normalize_path: { value: true }, path_with_escaped_slashes_action: 'REJECT_REQUEST' });
    const redirect = await serve({ normalize_path: { value: true }, path_with_escaped_slashes_action: 'UNESCAPE_AND_REDIRECT' });
    const forward = await serve({ normalize_path: { value: true }, path_with_escaped_slashes_action: 'UNESCAPE_AND_FORWARD' });
    expect(await send(keep, '/public/..%2fsecret')).to.deep.equal({ status: 200, body: 'app GET /public/..%2fsecret' });
    expect(await send(reject, '/public/..%2fsecret')).to.deep.equal({ status: 400, body: '' });
    expect(await send(reject, '/public/x?next=%2F')).to.deep.equal({ status: 200, body: 'app GET /public/x?next=%2F' });
    expect(await send(redirect, '/public/..%2Fapp%5cx?q=1')).to.deep.equal({ status: 307, body: '', location: '/app/x?q=1' });
    expect(await send(forward, '/public/..%2fsecret')).to.deep.equal({ status: 403, body: 'RBAC: access denied' });
    expect(await send(forward, '/a%2Fb%5Cc')).to.deep.equal({ status: 200, body: 'app GET /a/b/c' });
  });

  it('keeps the fragment when the proxy runs with the unsafe flag: normalization escapes it and the app sees it', async () => {
    const port = await serve({ normalize_path: { value: true } }, false);
    expect(await send(port, '/public#frag')).to.deep.equal({ status: 200, body: 'app GET /public%23frag' });
    const raw = await serve({}, false);
    expect(await send(raw, '/public#frag')).to.deep.equal({ status: 200, body: 'app GET /public#frag' });
  });

  it('takes the path of an absolute-form target, and answers 404 to a target that is not a path', async () => {
    const port = await serve({ normalize_path: { value: true } });
    expect(await send(port, 'http://app.example.com/x/../secret')).to.deep.equal({ status: 403, body: 'RBAC: access denied' });
    expect(await send(port, 'http://app.example.com')).to.deep.equal({ status: 200, body: 'app GET /' });
    expect(app.requests.at(-1)!.headers.host).to.equal('app.example.com');
    expect(await send(port, '*')).to.deep.equal({ status: 404, body: '' });
  });

  it('refuses (the listener update is NACKed) an escaped slashes action it does not know', () => {
    expect(
      () => new HttpConnectionManager({ route_config: {}, path_with_escaped_slashes_action: 'SOMETIMES' }, new FilterRegistry([], []), new TestContext(), { get: () => undefined }, router, { stripFragmentFromPath: true }),
    ).to.throw('http_connection_manager.path_with_escaped_slashes_action: unknown action "SOMETIMES"');
  });
});
