import { expect } from 'chai';
import * as net from 'node:net';
import * as path from 'node:path';
import { gunzipSync } from 'node:zlib';
import { Profile } from 'pprof-format';
import { PROGRAM_SCOPES } from '../../../src/modules/logging';
import { sidecarNode, SotwClient } from '../../helpers/ads-client';
import { RunningDaemon, startDaemon } from '../../helpers/daemon';
import { rawRequest } from '../../helpers/raw-http';
import { REPO_ROOT, runCli } from '../../helpers/run-cli';
import { json, request } from './http-client';

const SAMPLES = path.join(REPO_ROOT, 'samples', 'config');
const CDS = 'type.googleapis.com/envoy.config.cluster.v3.Cluster';

interface ScopeInfo {
  name: string;
  description: string;
  output_level: string;
  stack_trace_level: string;
  log_callers: boolean;
}

function decodeProfile(body: Buffer): { profile: Profile; strings: string[] } {
  expect(body.subarray(0, 2).toString('hex'), 'gzip magic').to.equal('1f8b');
  const profile = Profile.decode(gunzipSync(body));
  return { profile, strings: profile.stringTable.strings };
}

/** Each sample's frames as `name file`, leaf first. */
function stacks(profile: Profile, strings: string[]): Array<{ frames: string[]; values: number[] }> {
  const fns = new Map(profile.function.map((f) => [Number(f.id), f]));
  const locs = new Map(profile.location.map((l) => [Number(l.id), l]));
  return profile.sample.map((s) => ({
    values: s.value.map(Number),
    frames: s.locationId.map((id) => {
      const fn = fns.get(Number(locs.get(Number(id))!.line[0].functionId))!;
      return `${strings[Number(fn.name)]} ${strings[Number(fn.filename)]}`;
    }),
  }));
}

/** Writes `text` on a fresh connection and resolves with everything answered until the server closes it. */
function exchange(port: number, text: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = net.connect(port, '127.0.0.1', () => socket.write(text));
    let answer = '';
    socket.setTimeout(5000, () => socket.destroy(new Error(`no answer within 5 s; got ${JSON.stringify(answer.slice(0, 200))}`)));
    socket.on('data', (d) => (answer += d));
    socket.on('error', reject);
    socket.on('close', () => resolve(answer));
  });
}

/** Connects a proxy, waits for its clusters, and lets it go. */
async function connectProxy(daemon: RunningDaemon, ip: string): Promise<void> {
  const client = new SotwClient(daemon.grpcPort, sidecarNode(ip, 'default'));
  try {
    client.send({ type_url: CDS });
    await client.next(CDS);
  } finally {
    client.close();
  }
}

describe('ControlZ: the daemon introspection facility', function () {
  this.timeout(60_000);
  let daemon: RunningDaemon;

  before(async () => {
    daemon = await startDaemon(['--configDir', SAMPLES, '--profile'], { CTRLZ_TEST_MARKER: '<b>marked</b>' });
    expect(daemon.ctrlzPort, 'ControlZ port logged').to.be.greaterThan(0);
  });
  after(async () => {
    await daemon?.stop();
  });

  describe('scopes API', () => {
    it('lists every scope of the daemon with its description and levels', async () => {
      const { status, value } = await json<ScopeInfo[]>(daemon.ctrlzPort, 'GET', '/scopej/');
      expect(status).to.equal(200);
      const names = value.map((s) => s.name);
      const declared = PROGRAM_SCOPES['pilot-discovery'].filter((s) => s !== 'all');
      expect(names).to.include.members(declared);
      expect(names).not.to.include('all');
      expect(names).to.deep.equal([...names].sort());
      for (const s of value.filter((x) => declared.includes(x.name))) expect(s.description, s.name).to.not.equal('');
      const ads = value.find((s) => s.name === 'ads')!;
      expect(ads).to.deep.equal({ name: 'ads', description: ads.description, output_level: 'info', stack_trace_level: 'none', log_callers: false });
      // Without the trailing slash too, and one scope by name.
      expect((await json<ScopeInfo[]>(daemon.ctrlzPort, 'GET', '/scopej')).value).to.have.length(value.length);
      expect((await json<ScopeInfo>(daemon.ctrlzPort, 'GET', '/scopej/ads')).value.name).to.equal('ads');
    });

    it('PUT changes what the daemon logs, at once', async () => {
      // At info, a connecting proxy's pushes are not logged.
      let mark = daemon.output().length;
      await connectProxy(daemon, '10.0.0.1');
      await new Promise((r) => setTimeout(r, 200));
      expect(daemon.output().slice(mark)).not.to.match(/\tdebug\tads\t.*PUSH/);

      const put = await json<ScopeInfo>(daemon.ctrlzPort, 'PUT', '/scopej/ads', { output_level: 'debug' });
      expect(put.status).to.equal(202);
      expect(put.value.output_level).to.equal('debug');
      expect((await json<ScopeInfo>(daemon.ctrlzPort, 'GET', '/scopej/ads')).value.output_level).to.equal('debug');
      mark = daemon.output().length;
      await connectProxy(daemon, '10.0.0.2');
      await daemon.waitForLog(/\tdebug\tads\tCDS: PUSH node:sidecar~10\.0\.0\.2~/, 5000, mark);

      // Stack traces from debug on: the push line is followed by the frames that logged it.
      await json(daemon.ctrlzPort, 'PUT', '/scopej/ads', { stack_trace_level: 'debug' });
      mark = daemon.output().length;
      await connectProxy(daemon, '10.0.0.3');
      const withStack = await daemon.waitForLog(/CDS: PUSH node:sidecar~10\.0\.0\.3~[^\n]*\n\s*at [^\n]+/, 5000, mark);
      expect(withStack).to.match(/\n\s*at /);

      // Back to info: silent again. The stack trace level stays as it was set (only the field sent changes).
      const back = await json<ScopeInfo>(daemon.ctrlzPort, 'PUT', '/scopej/ads', { output_level: 'info' });
      expect(back.value).to.include({ output_level: 'info', stack_trace_level: 'debug' });
      await json(daemon.ctrlzPort, 'PUT', '/scopej/ads', { stack_trace_level: 'none' });
      mark = daemon.output().length;
      await connectProxy(daemon, '10.0.0.4');
      await new Promise((r) => setTimeout(r, 200));
      expect(daemon.output().slice(mark)).not.to.match(/PUSH node:sidecar~10\.0\.0\.4~/);
    });

    it('silences a scope with none, and logs callers when asked', async () => {
      // The change itself is logged in the default scope, until the default scope is silenced.
      let mark = daemon.output().length;
      await json(daemon.ctrlzPort, 'PUT', '/scopej/default', { output_level: 'none' });
      await json(daemon.ctrlzPort, 'PUT', '/scopej/wasm', { output_level: 'warn' });
      await new Promise((r) => setTimeout(r, 100));
      expect(daemon.output().slice(mark)).not.to.contain('scope wasm set');
      await json(daemon.ctrlzPort, 'PUT', '/scopej/default', { output_level: 'info', log_callers: true });
      mark = daemon.output().length;
      await json(daemon.ctrlzPort, 'PUT', '/scopej/wasm', { output_level: 'info' });
      // With log_callers the line names the file and line that logged it.
      const line = await daemon.waitForLog(/info\t\S+\.js:\d+\tControlZ: scope wasm set to output info/, 5000, mark);
      expect(line).to.contain('ctrlz/server.js');
      await json(daemon.ctrlzPort, 'PUT', '/scopej/default', { log_callers: false });
      expect((await json<ScopeInfo>(daemon.ctrlzPort, 'GET', '/scopej/default')).value.log_callers).to.equal(false);
    });

    it('refuses hostile and malformed requests with a clear status, and keeps serving', async () => {
      const port = daemon.ctrlzPort;
      const unknown = await json<{ error: string }>(port, 'GET', '/scopej/nosuch');
      expect(unknown.status).to.equal(404);
      expect(unknown.value.error).to.contain('"nosuch"');
      expect((await json<{ error: string }>(port, 'PUT', '/scopej/nosuch', { output_level: 'debug' })).status).to.equal(404);
      // Traversal-looking names are just unknown names: nothing is resolved as a path.
      for (const target of ['/scopej/../scopej/ads', '/scopej/..%2Fads', '/scopej/%2e%2e', '/scopej/ads/extra', '/scopej/ads%00', '/scopej/all']) {
        const r = await rawRequest('127.0.0.1', port, target, { host: '127.0.0.1' });
        expect(r.status, target).to.equal(404);
        expect(JSON.parse(r.body).error, target).to.match(/unknown scope/);
      }
      expect((await request(port, 'GET', '/scopej/%E0%A4%A')).status).to.equal(400);

      const bad = async (body: string) => {
        const r = await request(port, 'PUT', '/scopej/ads', { body });
        return { status: r.status, error: (JSON.parse(r.text) as { error: string }).error };
      };
      expect(await bad('{not json')).to.deep.include({ status: 400 });
      expect((await bad('{not json')).error).to.contain('not valid JSON');
      expect((await bad('[]')).error).to.contain('JSON object');
      expect((await bad('"debug"')).error).to.contain('JSON object');
      expect((await bad('{"output_level":"loud"}')).error).to.match(/^output_level: invalid level "loud"; levels are none, error, warn, info, debug/);
      expect((await bad('{"stack_trace_level":7}')).error).to.match(/^stack_trace_level: invalid level 7/);
      expect((await bad('{"output_level":"fatal"}')).status).to.equal(400);
      expect((await bad('{"log_callers":"yes"}')).error).to.match(/^log_callers: expected true or false/);
      expect((await bad('{"outputLevel":"debug"}')).error).to.match(/^"outputLevel": unknown field/);
      expect((await bad('{"name":"ca","output_level":"debug"}')).error).to.match(/^name: "ca" does not match/);
      // A YAML-ish alias bomb is just text that is not JSON.
      expect((await bad('a: &a [*a, *a]')).status).to.equal(400);

      // Huge bodies: refused by their declared length before any of it is read, or as soon as
      // one sent in chunks grows past the bound (the client never gets to send the rest).
      const declared = await exchange(port, 'PUT /scopej/ads HTTP/1.1\r\nHost: x\r\nContent-Length: 1073741824\r\n\r\n{');
      expect(declared).to.match(/^HTTP\/1\.1 413 [\s\S]*larger than 16384 bytes/);
      const chunk = 'y'.repeat(8192);
      const streamed = await exchange(port, `PUT /scopej/ads HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n${`2000\r\n${chunk}\r\n`.repeat(3)}`);
      expect(streamed).to.match(/^HTTP\/1\.1 413 /);

      expect((await request(port, 'DELETE', '/scopej/ads')).status).to.equal(405);
      expect((await request(port, 'POST', '/scopej/')).status).to.equal(405);
      // Nothing above changed the scope, and the daemon still answers.
      expect((await json<ScopeInfo>(port, 'GET', '/scopej/ads')).value.output_level).to.equal('info');
    });
  });

  describe('pages', () => {
    it('serves the home page and every topic as HTML (escaped, self-contained) and as JSON', async () => {
      const home = await request(daemon.ctrlzPort, 'GET', '/');
      expect(home.status).to.equal(200);
      expect(home.headers['content-type']).to.contain('text/html');
      for (const href of ['/scopez/', '/memz/', '/envz/', '/procz/', '/argsz/', '/versionz/', '/metricz/', '/debug/pprof/']) expect(home.text).to.contain(`href="${href}"`);

      const pages: Record<string, RegExp> = {
        '/scopez/': /<select form="scope-\d+" name="output_level">/,
        '/memz/': /heapUsed[\s\S]*used_heap_size/,
        '/envz/': /CTRLZ_TEST_MARKER<\/th><td>&lt;b&gt;marked&lt;\/b&gt;/,
        '/procz/': new RegExp(`<td>${process.platform}</td>`),
        '/argsz/': /<code>--configDir<\/code>/,
        '/versionz/': /<th scope="row">version<\/th><td>\d+\.\d+\.\d+/,
        '/metricz/': /pilot_services/,
      };
      for (const [p, pattern] of Object.entries(pages)) {
        const r = await request(daemon.ctrlzPort, 'GET', p);
        expect(r.status, p).to.equal(200);
        expect(r.text, p).to.match(pattern);
        // No scripts, and nothing fetched from elsewhere.
        expect(r.text, p).not.to.match(/<script|src=|href="(https?:)?\/\//i);
      }
      expect(JSON.stringify((await json(daemon.ctrlzPort, 'GET', '/envj/')).value)).to.contain('CTRLZ_TEST_MARKER');
      expect((await json<string[]>(daemon.ctrlzPort, 'GET', '/argsj/')).value).to.include('discovery');
      expect((await json<{ version: string }>(daemon.ctrlzPort, 'GET', '/versionj/')).value.version).to.match(/^\d+\.\d+\.\d+/);
      expect((await json<{ heap: object }>(daemon.ctrlzPort, 'GET', '/memj/')).value.heap).to.have.property('used_heap_size');
      expect((await json<{ pid: number }>(daemon.ctrlzPort, 'GET', '/procj/')).value.pid).to.equal(daemon.process.pid);
      expect((await json<{ pid: number }>(daemon.ctrlzPort, 'GET', '/homej/')).value.pid).to.equal(daemon.process.pid);
      const missing = await request(daemon.ctrlzPort, 'GET', '/nothing<script>');
      expect(missing.status).to.equal(404);
      expect(missing.text).not.to.contain('<script>');
    });

    it('changes a level from the scopes page form, and refuses cross-origin posts', async () => {
      const form = 'scope=wasm&output_level=error&stack_trace_level=none';
      const headers = { 'Content-Type': 'application/x-www-form-urlencoded' };
      const posted = await request(daemon.ctrlzPort, 'POST', '/scopez/', { body: form, headers });
      expect(posted.status).to.equal(303);
      expect(posted.headers.location).to.equal('/scopez/?changed=wasm');
      expect((await json<ScopeInfo>(daemon.ctrlzPort, 'GET', '/scopej/wasm')).value.output_level).to.equal('error');
      expect((await request(daemon.ctrlzPort, 'GET', '/scopez/?changed=wasm')).text).to.contain('Scope wasm changed.');

      const wrong = await request(daemon.ctrlzPort, 'POST', '/scopez/', { body: 'scope=wasm&output_level=loud', headers });
      expect(wrong.status).to.equal(400);
      expect(wrong.text).to.contain('output_level: invalid level &quot;loud&quot;');

      const foreign = await request(daemon.ctrlzPort, 'POST', '/scopez/', { body: 'scope=wasm&output_level=debug', headers: { ...headers, Origin: 'http://evil.example' } });
      expect(foreign.status).to.equal(403);
      expect((await json<ScopeInfo>(daemon.ctrlzPort, 'GET', '/scopej/wasm')).value.output_level).to.equal('error');
      await json(daemon.ctrlzPort, 'PUT', '/scopej/wasm', { output_level: 'info' });
    });
  });

  describe('profiles (--profile)', () => {
    it('takes a CPU profile in the pprof format, with samples in our code; one at a time', async () => {
      // Work for the daemon while it is profiled: debug pages and scope reads.
      let busy = true;
      const load = (async () => {
        while (busy) {
          await request(daemon.httpPort, 'GET', '/debug/configz');
          await request(daemon.ctrlzPort, 'GET', '/scopej/');
        }
      })();
      const profiling = request(daemon.ctrlzPort, 'GET', '/debug/pprof/profile?seconds=2');
      await new Promise((r) => setTimeout(r, 300));
      // A second profile, on either port, while the first runs: refused, not a second profiler.
      const second = await request(daemon.httpPort, 'GET', '/debug/pprof/profile?seconds=1');
      expect(second.status).to.equal(409);
      expect(second.text).to.contain('one CPU profile runs at a time');
      const r = await profiling;
      busy = false;
      await load;
      expect(r.status).to.equal(200);
      expect(r.headers['content-type']).to.equal('application/octet-stream');
      const { profile, strings } = decodeProfile(r.body);
      expect(profile.sampleType.map((t) => `${strings[Number(t.type)]}/${strings[Number(t.unit)]}`)).to.deep.equal(['samples/count', 'cpu/nanoseconds']);
      expect(Number(profile.durationNanos)).to.be.within(1.9e9, 5e9);
      expect(Number(profile.period)).to.be.greaterThan(0);
      const all = stacks(profile, strings);
      expect(all.length).to.be.greaterThan(0);
      const ours = all.filter((s) => s.values[0] > 0 && s.frames.some((f) => /\/dist\/src\/modules\/(debug|ctrlz|logging)\/\S+\.js$/.test(f)));
      expect(ours.length, 'samples whose stack runs through our request handlers').to.be.greaterThan(0);
      const names = new Set(ours.flatMap((s) => s.frames.map((f) => f.split(' ')[0])));
      expect([...names].some((n) => ['handle', 'route', 'allScopes', 'scopeNames', 'scopeState', 'write'].includes(n)), [...names].join(',')).to.equal(true);
      // The profiler is free again.
      const after = await request(daemon.httpPort, 'GET', '/debug/pprof/profile?seconds=1');
      expect(after.status).to.equal(200);
      decodeProfile(after.body);
    });

    it('takes heap profiles on both ports, and checks its parameters', async () => {
      for (const port of [daemon.ctrlzPort, daemon.httpPort]) {
        const r = await request(port, 'GET', '/debug/pprof/heap?gc=1');
        expect(r.status).to.equal(200);
        const { profile, strings } = decodeProfile(r.body);
        expect(profile.sampleType.map((t) => strings[Number(t.type)])).to.deep.equal(['inuse_objects', 'inuse_space']);
        expect(strings[Number(profile.defaultSampleType)]).to.equal('inuse_space');
        const samples = stacks(profile, strings);
        expect(samples.length).to.be.greaterThan(0);
        for (const s of samples) expect(s.values[1]).to.be.greaterThan(0);
      }
      for (const bad of ['/debug/pprof/profile?seconds=0', '/debug/pprof/profile?seconds=abc', '/debug/pprof/profile?seconds=301', '/debug/pprof/profile?seconds=-1', '/debug/pprof/heap?gc=maybe']) {
        const r = await request(daemon.ctrlzPort, 'GET', bad);
        expect(r.status, bad).to.equal(400);
      }
      const cmdline = await request(daemon.ctrlzPort, 'GET', '/debug/pprof/cmdline');
      expect(cmdline.text.split('\u0000')).to.include.members(['discovery', '--profile']);
      const index = await request(daemon.ctrlzPort, 'GET', '/debug/pprof/');
      expect(index.text).to.contain('href="/debug/pprof/heap"');
      expect((await request(daemon.httpPort, 'GET', '/debug/pprof/')).text).to.contain('href="/debug/pprof/profile"');
      const unknown = await request(daemon.ctrlzPort, 'GET', '/debug/pprof/goroutine');
      expect(unknown.status).to.equal(404);
      expect(unknown.text).to.contain('available: profile, heap, cmdline');
    });

    it('a client that gives up ends its CPU profile early', async () => {
      const abort = request(daemon.ctrlzPort, 'GET', '/debug/pprof/profile?seconds=60', { timeoutMs: 300 }).catch((e: Error) => e);
      expect(await abort).to.be.instanceOf(Error);
      // Well before the 60 s are up, the profiler takes the next request.
      const deadline = Date.now() + 5000;
      let status = 0;
      while (Date.now() < deadline) {
        status = (await request(daemon.ctrlzPort, 'GET', '/debug/pprof/profile?seconds=1')).status;
        if (status !== 409) break;
        await new Promise((r) => setTimeout(r, 100));
      }
      expect(status).to.equal(200);
    });
  });
});

describe('ControlZ: without --profile, on a busy port, with a bad address', function () {
  this.timeout(60_000);

  it('answers the profiling paths with a 404 that says how to turn them on', async () => {
    const daemon = await startDaemon(['--configDir', SAMPLES]);
    try {
      for (const port of [daemon.ctrlzPort, daemon.httpPort]) {
        for (const p of ['/debug/pprof/', '/debug/pprof/profile?seconds=1', '/debug/pprof/heap']) {
          const r = await request(port, 'GET', p);
          expect(r.status, `${port}${p}`).to.equal(404);
          expect(r.text).to.contain('--profile');
        }
      }
      // The rest of ControlZ is there.
      expect((await request(daemon.ctrlzPort, 'GET', '/scopej/')).status).to.equal(200);
    } finally {
      await daemon.stop();
    }
  });

  it('starts anyway when the ControlZ port is taken, and says so', async () => {
    const holder = net.createServer();
    await new Promise<void>((r) => holder.listen(0, '127.0.0.1', r));
    const port = (holder.address() as net.AddressInfo).port;
    const daemon = await startDaemon(['--configDir', SAMPLES, '--ctrlz_port', String(port)]);
    try {
      expect(daemon.ctrlzPort).to.equal(0);
      expect(daemon.output()).to.match(new RegExp(`warn\\tControlZ not started: ControlZ: cannot listen on 127\\.0\\.0\\.1:${port}`));
    } finally {
      await daemon.stop();
      holder.close();
    }
  });

  it('rejects a malformed --ctrlz_address naming the flag', async () => {
    const r = await runCli('pilot-discovery', ['discovery', '--configDir', SAMPLES, '--ctrlz_address', 'not an address', '--grpcAddr', '127.0.0.1:0', '--httpAddr', '127.0.0.1:0', '--monitoringAddr', '127.0.0.1:0']);
    expect(r.code).to.not.equal(0);
    expect(r.stderr).to.contain('invalid --ctrlz_address "not an address"');
  });

  it('listens on every address with --ctrlz_address "*"', async () => {
    const daemon = await startDaemon(['--configDir', SAMPLES, '--ctrlz_address', '*']);
    try {
      expect(daemon.output()).to.match(/ControlZ listening on (\[::\]|0\.0\.0\.0|:):\d+/);
      expect((await request(daemon.ctrlzPort, 'GET', '/homej/')).status).to.equal(200);
    } finally {
      await daemon.stop();
    }
  });
});
