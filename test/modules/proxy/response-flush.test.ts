import { expect } from 'chai';
import * as http from 'node:http';
import type { AddressInfo } from 'node:net';
import { endResponse } from '../../../src/modules/proxy/http/response-flush';

/** What a plain client got: the status and body, or the error its request ended with. */
type Outcome = { status: number; body: string } | { error: string };

function get(port: number, path: string): Promise<Outcome> {
  return new Promise((resolve) => {
    const req = http.get({ port, host: '127.0.0.1', path, agent: false }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (d: string) => (body += d));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
      res.on('error', (err) => resolve({ error: err.message }));
    });
    req.on('error', (err) => resolve({ error: err.message }));
  });
}

const nextTurn = () => new Promise<void>((resolve) => setImmediate(resolve));

describe('built-in proxy: downstream responses are coalesced while the proxy is busy', () => {
  let server: http.Server;
  let port: number;
  /** Requests held by the server until a test answers them, by path. */
  const held = new Map<string, http.ServerResponse>();
  let arrived: () => void = () => undefined;

  before(async () => {
    server = http.createServer((req, res) => {
      held.set(req.url ?? '', res);
      arrived();
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    port = (server.address() as AddressInfo).port;
  });
  after(() => {
    // A failed test may leave a client waiting on a held response.
    server.closeAllConnections();
    return new Promise<void>((resolve) => server.close(() => resolve()));
  });
  afterEach(() => held.clear());

  /** Sends one request per path and waits until the server holds all of them. */
  async function hold(...paths: string[]): Promise<{ responses: http.ServerResponse[]; outcomes: Promise<Outcome[]> }> {
    const all = new Promise<void>((resolve) => {
      arrived = () => {
        if (paths.every((p) => held.has(p))) resolve();
      };
    });
    const outcomes = Promise.all(paths.map((p) => get(port, p)));
    await all;
    return { responses: paths.map((p) => held.get(p)!), outcomes };
  }

  /** Puts the coalescing in the state a busy proxy is in: a turn that completed two responses. */
  async function becomeBusy(): Promise<void> {
    const { responses, outcomes } = await hold('/busy-1', '/busy-2');
    for (const res of responses) {
      res.writeHead(204);
      endResponse(res);
    }
    await outcomes;
    await nextTurn();
  }

  /** ...and in that of a quiet one: a turn that completed a single response. */
  async function becomeQuiet(): Promise<void> {
    const { responses, outcomes } = await hold('/quiet');
    responses[0].writeHead(204);
    endResponse(responses[0]);
    await outcomes;
    await nextTurn();
  }

  it('ends a response at once while the proxy completes one response a turn', async () => {
    await becomeQuiet();
    const { responses, outcomes } = await hold('/alone');
    responses[0].writeHead(200, { 'content-length': '5' });
    endResponse(responses[0], Buffer.from('alone'));
    expect(responses[0].writableEnded).to.equal(true);
    expect(await outcomes).to.deep.equal([{ status: 200, body: 'alone' }]);
  });

  it('once a turn completed several responses, ends the next turn\'s together at its end, each with its body', async () => {
    await becomeBusy();
    const { responses, outcomes } = await hold('/a', '/b', '/c');
    responses.forEach((res, i) => {
      res.writeHead(200, { 'content-length': '1' });
      endResponse(res, Buffer.from('abc'[i]));
    });
    expect(responses.map((r) => r.writableEnded)).to.deep.equal([false, false, false]);
    await nextTurn();
    expect(responses.map((r) => r.writableEnded)).to.deep.equal([true, true, true]);
    expect(await outcomes).to.deep.equal([
      { status: 200, body: 'a' },
      { status: 200, body: 'b' },
      { status: 200, body: 'c' },
    ]);
  });

  it('ends responses at once again after a turn that completed only one', async () => {
    await becomeBusy();
    const { responses, outcomes } = await hold('/last-busy', '/quiet-again');
    const [lastBusy, quietAgain] = responses;
    lastBusy.writeHead(204);
    endResponse(lastBusy);
    expect(lastBusy.writableEnded).to.equal(false);
    await nextTurn();
    expect(lastBusy.writableEnded).to.equal(true);
    quietAgain.writeHead(204);
    endResponse(quietAgain);
    expect(quietAgain.writableEnded).to.equal(true);
    expect(await outcomes).to.deep.equal([
      { status: 204, body: '' },
      { status: 204, body: '' },
    ]);
  });

  it('skips a response whose client went away before the turn ended; the others still go out', async () => {
    await becomeBusy();
    const { responses, outcomes } = await hold('/gone', '/kept');
    const [gone, kept] = responses;
    gone.writeHead(200, { 'content-length': '4' });
    endResponse(gone, Buffer.from('gone'));
    kept.writeHead(200, { 'content-length': '4' });
    endResponse(kept, Buffer.from('kept'));
    gone.destroy();
    const [first, second] = await outcomes;
    expect(first).to.have.property('error');
    expect(second).to.deep.equal({ status: 200, body: 'kept' });
  });

  for (const state of ['quiet', 'busy'] as const) {
    it(`resets the connection of a response whose end throws, and still ends the others (${state})`, async () => {
      await (state === 'busy' ? becomeBusy() : becomeQuiet());
      const { responses, outcomes } = await hold('/broken', '/fine');
      const [broken, fine] = responses;
      broken.end = () => {
        throw new Error('end failed');
      };
      endResponse(broken, Buffer.from('x'));
      fine.writeHead(200, { 'content-length': '4' });
      endResponse(fine, Buffer.from('fine'));
      const [first, second] = await outcomes;
      expect(first).to.have.property('error');
      expect(second).to.deep.equal({ status: 200, body: 'fine' });
      expect(broken.destroyed).to.equal(true);
    });
  }

  it('leaves a response ended while a turn is being flushed to the next turn', async () => {
    await becomeBusy();
    const { responses, outcomes } = await hold('/first', '/later');
    const [first, later] = responses;
    first.writeHead(200, { 'content-length': '5' });
    first.once('prefinish', () => {
      later.writeHead(200, { 'content-length': '5' });
      endResponse(later, Buffer.from('later'));
      expect(later.writableEnded).to.equal(false);
    });
    endResponse(first, Buffer.from('first'));
    expect(first.writableEnded).to.equal(false);
    expect(await outcomes).to.deep.equal([
      { status: 200, body: 'first' },
      { status: 200, body: 'later' },
    ]);
  });
});
