/**
 * The dashboard runner every `meshctl dashboard` shares: the URL first, a real browser opener
 * started with it (a script standing in for xdg-open), a clear line when none exists, serving
 * until SIGINT or SIGTERM, then the forward closed; the reference's choice of local port.
 */
import { expect } from 'chai';
import { EventEmitter } from 'node:events';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { listenPreferring, serveDashboard } from '../../../src/modules/cli/dashboard-runner';
import { waitFor } from '../../helpers/orch-mesh';

function fakeForward() {
  const state = { closed: 0 };
  return { state, forward: { url: 'http://localhost:4321', close: async () => void (state.closed += 1) } };
}

describe('dashboard runner', function () {
  this.timeout(10_000);
  let dir: string;
  beforeEach(() => (dir = fs.mkdtempSync(path.join(os.tmpdir(), 'mesh-dash-'))));
  afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

  it('prints the URL, skips the browser when told, and serves until SIGINT, then closes the forward', async () => {
    const signals = new EventEmitter();
    const out: string[] = [];
    const { state, forward } = fakeForward();
    let finished = false;
    const run = serveDashboard(forward, { path: '/debug', browser: false, out: (t) => out.push(t), signals }).then(() => (finished = true));
    await new Promise((r) => setTimeout(r, 100));
    expect(out).to.deep.equal(['http://localhost:4321/debug\n', 'skipping opening a browser\n']);
    expect(finished).to.equal(false);
    expect(state.closed).to.equal(0);
    signals.emit('SIGINT');
    await run;
    expect(state.closed).to.equal(1);
    expect(signals.listenerCount('SIGINT') + signals.listenerCount('SIGTERM')).to.equal(0);
  });

  it('starts the browser opener with the URL, and stops on SIGTERM', async () => {
    const opener = path.join(dir, 'fake-open');
    const seen = path.join(dir, 'seen');
    fs.writeFileSync(opener, `#!/bin/sh\necho "$1" > ${seen}\n`, { mode: 0o755 });
    const signals = new EventEmitter();
    const out: string[] = [];
    const { state, forward } = fakeForward();
    const run = serveDashboard(forward, { browser: true, out: (t) => out.push(t), signals, opener: { command: opener, args: (url) => [url] } });
    const opened = await waitFor(() => (fs.existsSync(seen) ? fs.readFileSync(seen, 'utf8') : ''), (s) => s !== '', 'the opener to run', 5000);
    expect(opened).to.equal('http://localhost:4321\n');
    expect(out).to.deep.equal(['http://localhost:4321\n']);
    signals.emit('SIGTERM');
    await run;
    expect(state.closed).to.equal(1);
  });

  it('says no browser opener was found and keeps serving', async () => {
    const signals = new EventEmitter();
    const out: string[] = [];
    const { state, forward } = fakeForward();
    const run = serveDashboard(forward, { browser: true, out: (t) => out.push(t), signals, opener: { command: path.join(dir, 'no-such-opener'), args: (url) => [url] } });
    await waitFor(() => out.length, (n) => n === 2, 'the message');
    expect(out[1]).to.equal(`no browser opener (${path.join(dir, 'no-such-opener')}) was found; open http://localhost:4321 in your browser\n`);
    expect(state.closed).to.equal(0);
    signals.emit('SIGINT');
    await run;
    expect(state.closed).to.equal(1);
  });

  it('listens on --port when given, else on the UI port when free, else on any port', async () => {
    const tried: number[] = [];
    const listen = async (port: number) => {
      tried.push(port);
      if (port === 3000) throw new Error('address in use');
      return port;
    };
    expect(await listenPreferring(listen, 0, 9090)).to.equal(9090);
    expect(await listenPreferring(listen, 0, 3000)).to.equal(0);
    expect(await listenPreferring(listen, 8000, 3000)).to.equal(8000);
    let error = '';
    await listenPreferring(listen, 3000, 9090).catch((e: Error) => (error = e.message));
    expect(error).to.equal('address in use');
    expect(tried).to.deep.equal([9090, 3000, 0, 8000, 3000]);
  });
});
