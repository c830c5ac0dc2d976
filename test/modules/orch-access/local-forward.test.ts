import * as http from 'node:http';
import * as net from 'node:net';
import { expect } from 'chai';
import { OrchAccess, PortForwardError } from '../../../src/modules/orch-access';
import { OrchApiServer, startOrchApiServer } from '../../helpers/orch-api';
import { runPod } from '../../helpers/orch-mesh';
import { failureOf, hasIpv6Loopback, kubeconfigOf, listenTcp, meshctlOrchAccess, until } from './support';

/** GET `url` with a fresh connection; the status and body. */
function get(url: string): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = http.get(url, { agent: false, timeout: 10_000 }, (res) => {
      let body = '';
      res.on('data', (c) => (body += c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
    });
    req.on('timeout', () => req.destroy(new Error(`GET ${url} timed out`)));
    req.on('error', reject);
  });
}

function connectError(host: string, port: number): Promise<string | undefined> {
  return new Promise((resolve) => {
    const s = net.connect({ host, port });
    s.on('connect', () => {
      s.destroy();
      resolve(undefined);
    });
    s.on('error', (err: NodeJS.ErrnoException) => resolve(err.code));
  });
}

describe('orch-access: PortForwarder.listen (local listener, a forward per connection)', function () {
  this.timeout(30_000);
  let server: OrchApiServer;
  let access: OrchAccess;
  let cleanup: () => void;
  let ipv6 = false;
  const closers: (() => unknown)[] = [];

  before(async () => {
    server = await startOrchApiServer();
    let kubeconfig: string;
    ({ file: kubeconfig, cleanup } = kubeconfigOf(server));
    access = meshctlOrchAccess({ orchconfig: kubeconfig });
    ipv6 = await hasIpv6Loopback();
    const app = http.createServer((req, res) => res.end(`admin ${req.url}`));
    const port = await listenTcp(app);
    closers.push(() => {
      app.closeAllConnections();
      return new Promise((r) => app.close(r));
    });
    await runPod(server, { name: 'proxy-1', namespace: 'apps', ports: { 15000: port } });
  });
  after(async () => {
    await access.close();
    for (const close of closers.splice(0)) await close();
    await server.stop();
    cleanup();
  });

  /** A server holding `host` on `port` (0: any), closed after the test. */
  async function occupy(host: string, port = 0): Promise<number> {
    const blocker = net.createServer();
    const got = await listenTcp(blocker, host, port);
    closers.push(() => new Promise((r) => blocker.close(r)));
    return got;
  }

  const pod = { name: 'proxy-1', namespace: 'apps' };

  it('localhost binds 127.0.0.1 and ::1 on one picked port; both serve the pod; closed, connections are refused', async function () {
    const local = await access.forwarder.listen(pod, 15000, { address: 'localhost', port: 0 });
    expect(local.port).to.be.greaterThan(0);
    expect(local.url).to.equal(`http://localhost:${local.port}`);
    if (ipv6) {
      expect(local.urls).to.deep.equal([`http://127.0.0.1:${local.port}`, `http://[::1]:${local.port}`]);
      expect(await get(`http://[::1]:${local.port}/v6`)).to.deep.equal({ status: 200, body: 'admin /v6' });
    } else {
      // No ::1 here: only the IPv4 half can be checked.
      expect(local.urls).to.deep.equal([`http://127.0.0.1:${local.port}`]);
    }
    expect(await get(`http://127.0.0.1:${local.port}/v4`)).to.deep.equal({ status: 200, body: 'admin /v4' });
    await local.close();
    expect(await connectError('127.0.0.1', local.port)).to.equal('ECONNREFUSED');
    if (ipv6) expect(await connectError('::1', local.port)).to.equal('ECONNREFUSED');
    await until('no forward left', () => server.portForward.active === 0);
  });

  it('localhost with a fixed port taken on one family still listens on the other', async function () {
    if (!ipv6) this.skip(); // needs ::1 on this machine
    const port = await occupy('127.0.0.1');
    const local = await access.forwarder.listen(pod, 15000, { address: 'localhost', port });
    expect(local.urls).to.deep.equal([`http://[::1]:${port}`]);
    expect((await get(`http://[::1]:${port}/only-v6`)).body).to.equal('admin /only-v6');
    await local.close();
    const other = await occupy('::1');
    const v4only = await access.forwarder.listen(pod, 15000, { address: 'localhost', port: other });
    expect(v4only.urls).to.deep.equal([`http://127.0.0.1:${other}`]);
    expect((await get(`http://127.0.0.1:${other}/only-v4`)).body).to.equal('admin /only-v4');
    await v4only.close();
  });

  it('localhost with the port taken on both families fails, naming address and port', async () => {
    const port = await occupy('127.0.0.1');
    if (ipv6) await occupy('::1', port);
    const err = await failureOf(access.forwarder.listen(pod, 15000, { address: 'localhost', port }));
    expect(err).to.be.instanceOf(PortForwardError);
    expect(err.message).to.match(new RegExp(`^cannot listen on localhost port ${port} for port 15000 of pod proxy-1 in namespace apps: 127\\.0\\.0\\.1: .*EADDRINUSE.*; ::1: .*`));
  });

  it('an IP address binds only that address; a name that is not localhost or an IP is refused', async () => {
    const local = await access.forwarder.listen(pod, 15000, { address: '127.0.0.1', port: 0 });
    expect(local.urls).to.deep.equal([`http://127.0.0.1:${local.port}`]);
    expect(local.url).to.equal(local.urls[0]);
    if (ipv6) expect(await connectError('::1', local.port)).to.equal('ECONNREFUSED');
    await local.close();
    const err = await failureOf(access.forwarder.listen(pod, 15000, { address: 'example.com', port: 0 }));
    expect(err.message).to.equal('address must be localhost or an IP address, got "example.com"');
  });

  it('serves many connections at once, each its own forward', async () => {
    const local = await access.forwarder.listen(pod, 15000, { address: '127.0.0.1', port: 0 });
    const answers = await Promise.all(Array.from({ length: 20 }, (_, i) => get(`${local.urls[0]}/c${i}`)));
    expect(answers.map((a) => a.body)).to.deep.equal(Array.from({ length: 20 }, (_, i) => `admin /c${i}`));
    await local.close();
    await until('no forward left', () => server.portForward.active === 0);
  });

  it('closing the listener cuts connections still open, on both sides', async () => {
    const held = new Set<net.Socket>();
    const hold = net.createServer((s) => {
      held.add(s);
      s.on('close', () => held.delete(s));
      s.on('error', () => undefined);
    });
    const port = await listenTcp(hold);
    closers.push(() => new Promise((r) => hold.close(r)));
    await runPod(server, { name: 'holder', namespace: 'apps', ports: { 9000: port } });
    const local = await access.forwarder.listen({ name: 'holder', namespace: 'apps' }, 9000, { address: '127.0.0.1', port: 0 });
    const client = net.connect(local.port, '127.0.0.1');
    const clientClosed = new Promise((r) => client.on('close', r));
    client.on('error', () => undefined);
    await until('the pod side to be connected', () => held.size === 1);
    await local.close();
    await clientClosed;
    await until('the pod side to close', () => held.size === 0 && server.portForward.active === 0);
  });

  it('a connection whose forward fails is closed and reported', async () => {
    await runPod(server, { name: 'nothing', namespace: 'apps' });
    const errors: Error[] = [];
    const local = await access.forwarder.listen({ name: 'nothing', namespace: 'apps' }, 8080, { address: '127.0.0.1', port: 0, onError: (err) => errors.push(err) });
    const err = await failureOf(get(`${local.urls[0]}/`));
    expect(err.message).to.match(/socket hang up|ECONNRESET/);
    await until('the error reported', () => errors.length === 1);
    expect(errors[0].message).to.match(/^port-forward to port 8080 of pod nothing in namespace apps failed: .*connection refused$/);
    await local.close();
  });
});
