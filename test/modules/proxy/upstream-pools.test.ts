import { expect } from 'chai';
import * as http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Dispatcher } from 'undici';
import { UpstreamPools } from '../../../src/modules/proxy/upstream/upstream-pools';

/**
 * The router's upstream pools over time: endpoints come and go (a pod rescheduled gets a new
 * address), so a pool nobody asks for any more is closed and forgotten, never one with a
 * request still on it.
 */
describe('built-in proxy upstream pools', () => {
  let app: http.Server;
  let port: number;
  let releaseSlow: (() => void) | undefined;
  let pools: UpstreamPools;
  const CONNECT_TIMEOUT_MS = 5_000;

  before(async () => {
    app = http.createServer((req, res) => {
      if (req.url === '/slow') {
        releaseSlow = () => res.end('slow done');
        return;
      }
      res.end('ok');
    });
    await new Promise<void>((resolve) => app.listen(0, '127.0.0.1', resolve));
    port = (app.address() as AddressInfo).port;
  });

  after(async () => {
    app.closeAllConnections();
    await new Promise<void>((resolve) => app.close(() => resolve()));
  });

  beforeEach(() => {
    pools = new UpstreamPools();
  });

  afterEach(() => pools.close());

  const get = async (pool: Dispatcher | undefined, path = '/'): Promise<{ status: number; text: string }> => {
    const { statusCode, body } = await pool!.request({ method: 'GET', path });
    return { status: statusCode, text: await body.text() };
  };

  it('keeps a pool per endpoint while it is asked for', async () => {
    const endpoint = { address: '127.0.0.1', port };
    const first = pools.poolFor(endpoint, undefined, CONNECT_TIMEOUT_MS);
    expect(await get(first)).to.deep.equal({ status: 200, text: 'ok' });
    pools.sweep();
    expect(pools.poolFor(endpoint, undefined, CONNECT_TIMEOUT_MS), 'asked for since the last sweep').to.equal(first);
    pools.sweep();
    expect(pools.poolFor(endpoint, undefined, CONNECT_TIMEOUT_MS)).to.equal(first);
    expect(pools.size).to.equal(1);
  });

  it('closes and forgets a pool not asked for during a whole sweep interval, and opens a new one when the endpoint is back', async () => {
    const gone = { address: '127.0.0.1', port };
    const old = pools.poolFor(gone, undefined, CONNECT_TIMEOUT_MS);
    expect(await get(old)).to.deep.equal({ status: 200, text: 'ok' });
    pools.sweep();
    expect(pools.size, 'one sweep is not a whole interval').to.equal(1);
    pools.sweep();
    expect(pools.size).to.equal(0);
    expect((old as unknown as { closed: boolean }).closed).to.equal(true);
    const fresh = pools.poolFor(gone, undefined, CONNECT_TIMEOUT_MS);
    expect(fresh).to.not.equal(old);
    expect(await get(fresh)).to.deep.equal({ status: 200, text: 'ok' });
  });

  it('never closes a pool with a request still running on it', async () => {
    const endpoint = { address: '127.0.0.1', port };
    const pool = pools.poolFor(endpoint, undefined, CONNECT_TIMEOUT_MS);
    const slow = get(pool, '/slow');
    while (!releaseSlow) await new Promise((resolve) => setTimeout(resolve, 5));
    pools.sweep();
    pools.sweep();
    pools.sweep();
    expect(pools.size, 'the running request keeps its pool').to.equal(1);
    releaseSlow();
    expect(await slow).to.deep.equal({ status: 200, text: 'slow done' });
    expect(pools.poolFor(endpoint, undefined, CONNECT_TIMEOUT_MS)).to.equal(pool);
  });
});
