import { expect } from 'chai';
import { Container } from 'inversify';
import { TypeUrl } from '../../../src/modules/envoy/type-urls';
import { encodeResource } from '../../../src/modules/model/body-interning';
import { concatRuns, runsOf, sharedList, XdsGenerator } from '../../../src/modules/model/generator';
import { encodeDeltaDiscoveryResponse } from '../../../src/modules/envoy/wire';
import { contentKey } from '../../../src/modules/xds/shared-encodings';
import { defaultLoggingOptions, Logging } from '../../../src/modules/logging';
import { newWatchState, versionMarker, XdsConnection } from '../../../src/modules/xds/connection';
import { XdsObserver } from '../../../src/modules/xds/observer';
import { keepRemovedResources, namesToGenerate, planDeltaResponse, planSotwResponse } from '../../../src/modules/xds/response-planner';
import { XdsServer, XdsServerOptions, XdsServerOptionsToken } from '../../../src/modules/xds/server';
import { WRITE_TIMEOUT_MS } from '../../../src/modules/xds/ads-stream';
import type { AdsCall } from '../../../src/modules/xds/ads-service';
import { DeltaStream } from '../../../src/modules/xds/delta-stream';
import { PushQueue } from '../../../src/modules/xds/push-queue';
import { Responder } from '../../../src/modules/xds/responder';
import { proxyOf } from '../../helpers/push';
import { resourceVersion } from '../../../src/modules/xds/versions';
import { WriteBudget } from '../../../src/modules/xds/write-budget';
import { resourcesOf, sidecarNode, SotwClient } from '../../helpers/ads-client';
import { pushOf } from '../../helpers/push';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const resource = (name: string, text = name) => ({ name, body: Buffer.from(text) });

import { countEventLoopTurns } from '../../helpers/event-loop-turns';

describe('xDS server parts', () => {
  describe('WriteBudget (connect storms)', () => {
    it('holds a preparation slot until freed, and frees it once however often it is freed', async () => {
      const budget = new WriteBudget(1, 1000);
      const first = await budget.startPreparing();
      let second: (() => void) | undefined;
      const waiting = budget.startPreparing().then((done) => (second = done));
      await sleep(5);
      expect(second).to.equal(undefined);
      first();
      first();
      await waiting;
      // The double free above did not open a second slot: a third still waits.
      let third = false;
      const last = budget.startPreparing().then((done) => {
        third = true;
        done();
      });
      await sleep(5);
      expect(third).to.equal(false);
      second!();
      await last;
    });

    it('reserves about the encoded size of a response and waits while it does not fit', async () => {
      const budget = new WriteBudget(16, 2000);
      const big = [resource('a', 'x'.repeat(1000))];
      const reserved = await budget.reserve(TypeUrl.Cluster, big);
      expect(reserved).to.be.greaterThan(1000).and.lessThan(2000);
      let admitted = false;
      const next = budget.reserve(TypeUrl.Cluster, big).then((n) => {
        admitted = true;
        return n;
      });
      await sleep(5);
      expect(admitted).to.equal(false);
      budget.release(reserved);
      budget.release(await next);
    });

    it('reserves for a response made of shared runs what it would for the same resources listed', async () => {
      const budget = new WriteBudget(16, 1_000_000);
      const shared = Object.freeze([resource('a', 'x'.repeat(300)), resource('b', 'y'.repeat(70))]);
      const own = Object.freeze([resource('c', 'z'.repeat(9))]);
      const flat = await budget.reserve(TypeUrl.Cluster, [...shared, ...own]);
      expect(await budget.reserve(TypeUrl.Cluster, [...shared, ...own], [shared, own])).to.equal(flat);
      expect(await budget.reserve(TypeUrl.Cluster, [...shared, ...own], [shared, own])).to.equal(flat, 'again, from what the runs were worked out to');
      expect(await budget.reserve(TypeUrl.ClusterLoadAssignment, [...shared, ...own], [shared, own])).to.not.equal(flat, 'the type URL is part of each entry');
    });
  });

  describe('response planner (what was sent against what is generated)', () => {
    it('answers a state-of-the-world CDS push only on a change or a removal, listing everything', () => {
      const watch = newWatchState(undefined);
      const [a, b] = [resource('a'), resource('b')];
      const first = planSotwResponse(watch, TypeUrl.Cluster, [a, b], true)!;
      expect(first.resources).to.deep.equal([a, b]);
      first.recordSent();
      expect(planSotwResponse(watch, TypeUrl.Cluster, [a, b], false)).to.equal(undefined);
      // Same bytes in another buffer are no change either.
      expect(planSotwResponse(watch, TypeUrl.Cluster, [a, resource('b')], false)).to.equal(undefined);
      expect(planSotwResponse(watch, TypeUrl.Cluster, [a], false)!.resources).to.deep.equal([a]);
    });

    it('sends only the changed RDS and EDS resources on a push, and everything asked for on a request', () => {
      const watch = newWatchState(new Set(['r1', 'r2']));
      const [r1, r2] = [resource('r1'), resource('r2')];
      planSotwResponse(watch, TypeUrl.RouteConfiguration, [r1, r2], true)!.recordSent();
      const r2b = resource('r2', 'changed');
      expect(planSotwResponse(watch, TypeUrl.RouteConfiguration, [r1, r2b], false)!.resources).to.deep.equal([r2b]);
      expect(planSotwResponse(watch, TypeUrl.RouteConfiguration, [r1, r2], true)!.resources).to.deep.equal([r1, r2]);
    });

    it('names the removals of a delta response, and skips what the proxy said it has', () => {
      const [a, b] = [resource('a'), resource('b')];
      const watch = newWatchState(undefined);
      watch.sent.set('a', versionMarker(resourceVersion(a.body)));
      watch.sent.set('gone', Buffer.from('old'));
      const plan = planDeltaResponse(watch, [a, b], undefined, false)!;
      expect(plan.resources.map((r) => r.name)).to.deep.equal(['b']);
      expect(plan.removed).to.deep.equal(['gone']);
      plan.recordSent();
      expect([...watch.sent.keys()].sort()).to.deep.equal(['a', 'b']);
      expect(planDeltaResponse(watch, [a, b], undefined, false)).to.equal(undefined);
      // Asked by name: a name the generator did not answer is removed.
      expect(planDeltaResponse(watch, [a], ['a', 'b'], false)!.removed).to.deep.equal(['b']);
    });

    it('keeps clusters that went away (make before break), but not what the proxy only said it has', () => {
      const watch = newWatchState(undefined);
      const [a, old] = [resource('a'), resource('old')];
      watch.sent.replace([a, old]);
      watch.sent.set('marker', versionMarker('v1'));
      const generated = [a];
      expect(keepRemovedResources(watch, generated)).to.equal(true);
      expect(generated).to.deep.equal([a, old]);
      expect(keepRemovedResources(watch, [a, old, resource('marker')])).to.equal(false);
    });

    it('generates the names a subscription asks for; a wildcard state-of-the-world LDS or CDS, everything', () => {
      const named = newWatchState(new Set(['x', 'y']));
      expect(namesToGenerate(named, 'all', 'sotw', TypeUrl.ClusterLoadAssignment)).to.deep.equal(['x', 'y']);
      expect(namesToGenerate(named, new Set(['y', 'z']), 'sotw', TypeUrl.ClusterLoadAssignment)).to.deep.equal(['y']);
      const wildcard = newWatchState(undefined);
      expect(namesToGenerate(wildcard, new Set(['c']), 'sotw', TypeUrl.Cluster)).to.equal(undefined);
      expect(namesToGenerate(wildcard, new Set(['c']), 'delta', TypeUrl.Cluster)).to.deep.equal(['c']);
      expect(namesToGenerate(wildcard, 'all', 'delta', TypeUrl.Cluster)).to.equal(undefined);
    });
  });

  describe('shared runs (a first response made of what a scope shares and what is the proxy\'s own)', () => {
    const run = (prefix: string, n: number, text = prefix) => Array.from({ length: n }, (_, i) => resource(`${prefix}-${i}`, `${text}-${i}`));
    const outbound = run('out', 300);
    const fixed = run('fixed', 2);
    const delta = (list: readonly { name: string; body: Buffer; version: string }[]) => list.map((r) => [r.name, r.body.toString(), r.version]);

    it('marks a list as its runs only while it is unchanged, and freezes the runs', () => {
      const list = concatRuns([outbound, fixed, run('in', 2)]);
      expect(list).to.have.length(304);
      expect(runsOf(list)).to.have.length(3);
      expect(() => (outbound as unknown as unknown[]).push(resource('late'))).to.throw(TypeError);
      const grown = concatRuns([outbound, fixed]);
      grown.push(resource('kept'));
      expect(runsOf(grown)).to.equal(undefined);
      const edited = concatRuns([outbound, fixed]);
      edited[299] = resource('other');
      expect(runsOf(edited)).to.equal(undefined);
      expect(runsOf([...list])).to.equal(undefined);
    });

    it('plans, records and encodes a first delta response from runs exactly as from the flat list', () => {
      const inbound = run('in', 3);
      const withRuns = newWatchState(undefined);
      const flat = newWatchState(undefined);
      const a = planDeltaResponse(withRuns, concatRuns([outbound, fixed, inbound]), undefined, true)!;
      const b = planDeltaResponse(flat, [...outbound, ...fixed, ...inbound], undefined, true)!;
      expect(a.runs).to.have.length(3);
      expect(b.runs).to.equal(undefined);
      expect(delta(a.resources)).to.deep.equal(delta(b.resources));
      const bytes = (p: typeof a) => encodeDeltaDiscoveryResponse(TypeUrl.Cluster, 'v1', 'n1', p.resources, p.removed, 'cp', p.runs);
      expect(bytes(a).equals(bytes(b))).to.equal(true);
      a.recordSent();
      b.recordSent();
      expect([...withRuns.sent]).to.deep.equal([...flat.sent]);
      // What follows is planned against what was recorded, as for any stream.
      expect(planDeltaResponse(withRuns, concatRuns([outbound, fixed, inbound]), undefined, false)).to.equal(undefined);
      const changed = planDeltaResponse(withRuns, concatRuns([outbound, fixed.slice(1)]), undefined, false)!;
      expect(changed.removed).to.deep.equal(['fixed-0', 'in-0', 'in-1', 'in-2']);
    });

    it('answers a push that changed every resource of a shared list with its runs: the same resources, bytes and key for every proxy', () => {
      const before = run('eds', 3);
      const after = Object.freeze(before.map((r) => resource(r.name, `${r.body}-moved`)));
      const pushed = sharedList(after);
      const streams = [newWatchState(undefined), newWatchState(undefined), newWatchState(undefined)];
      for (const watch of streams) watch.sent.replace(before);
      // One of them already holds one of the new bodies: only the rest is news to it.
      streams[2].sent.set('eds-0', after[0].body);
      const plans = streams.map((watch) => planDeltaResponse(watch, pushed, undefined, false)!);
      expect(plans[1].resources, 'one list for every proxy').to.equal(plans[0].resources);
      expect(plans[0].runs).to.have.length(1);
      expect(plans[2].resources.map((r) => r.name)).to.deep.equal(['eds-1', 'eds-2']);
      expect(plans[2].runs).to.equal(undefined);
      // What goes out is what the per-resource path would send.
      const flat = newWatchState(undefined);
      flat.sent.replace(before);
      const perResource = planDeltaResponse(flat, [...after], undefined, false)!;
      expect(perResource.runs).to.equal(undefined);
      expect(delta(plans[0].resources)).to.deep.equal(delta(perResource.resources));
      const bytes = (p: typeof perResource) => encodeDeltaDiscoveryResponse(TypeUrl.ClusterLoadAssignment, 'v2', 'n', p.resources, p.removed, 'cp', p.runs);
      expect(bytes(plans[0]).equals(bytes(perResource))).to.equal(true);
      const key = (p: typeof perResource) => contentKey({ protocol: 'delta', typeUrl: TypeUrl.ClusterLoadAssignment, version: 'v2', resources: p.resources, removed: p.removed, runs: p.runs });
      expect(key(plans[1])).to.equal(key(plans[0]));
      expect(key(plans[2])).not.to.equal(key(plans[0]));
      plans[0].recordSent();
      expect(planDeltaResponse(streams[0], pushed, undefined, false), 'nothing new the second time').to.equal(undefined);
    });

    it('answers names asked for but not generated with removals, as the flat path does', () => {
      const asked = ['out-0', 'missing'];
      const plan = planDeltaResponse(newWatchState(new Set(asked)), concatRuns([[outbound[0]]]), asked, true)!;
      expect(plan.resources.map((r) => r.name)).to.deep.equal(['out-0']);
      expect(plan.removed).to.deep.equal(['missing']);
    });

    it('gives proxies with the same runs one content key, and a proxy with other bytes its own', () => {
      const key = (inbound: readonly { name: string; body: Buffer }[]) => {
        const planned = planDeltaResponse(newWatchState(undefined), concatRuns([outbound, fixed, inbound]), undefined, true)!;
        return contentKey({ protocol: 'delta', typeUrl: TypeUrl.Cluster, version: 'v1', resources: planned.resources, removed: planned.removed, runs: planned.runs });
      };
      // Two proxies' own runs are different arrays; the same names and (interned) bodies share the key.
      const own = run('in', 3);
      expect(key(own.slice(0, 2))).to.equal(key(own.slice(0, 2)));
      expect(key(own.slice(0, 2))).to.not.equal(key([own[0], { name: 'in-1', body: own[2].body }]));
      expect(key(own.slice(0, 2))).to.not.equal(key(own));
    });

    it('hands a shared runs list one key per protocol, type and version, and a new one when any of them changes', () => {
      const runs = Object.freeze([Object.freeze(run('ep', 2))]);
      const resources = runs[0];
      const key = (protocol: 'sotw' | 'delta', typeUrl: string, version: string) => contentKey({ protocol, typeUrl, version, resources, runs });
      const first = key('delta', TypeUrl.ClusterLoadAssignment, 'v1');
      expect(key('delta', TypeUrl.ClusterLoadAssignment, 'v1')).to.equal(first);
      const others = [key('delta', TypeUrl.ClusterLoadAssignment, 'v2'), key('sotw', TypeUrl.ClusterLoadAssignment, 'v2'), key('sotw', TypeUrl.Cluster, 'v2')];
      expect(new Set([first, ...others]).size, 'each change of protocol, type or version is another key').to.equal(4);
      expect(key('delta', TypeUrl.ClusterLoadAssignment, 'v1'), 'back to the first: the same key as then').to.equal(first);
      // Removals make the key too: the same runs with a name removed are another response.
      expect(contentKey({ protocol: 'delta', typeUrl: TypeUrl.ClusterLoadAssignment, version: 'v1', resources, runs, removed: ['gone'] })).to.not.equal(first);
    });
  });

  describe('a stream\'s writes', () => {
    /** A stream whose call takes writes and calls back only when told to. */
    function streamWithHeldWrites(): { stream: DeltaStream; timeouts: () => number; release: () => void } {
      const logging = new Logging('pilot-discovery');
      logging.configure({ ...defaultLoggingOptions('pilot-discovery'), defaultOutputLevel: 'none' });
      let timeouts = 0;
      const observer = new Proxy({}, { get: (_t, name) => (name === 'writeTimeout' ? () => (timeouts += 1) : () => undefined) }) as XdsObserver;
      const held: Array<() => void> = [];
      const call = { write: (_body: Buffer, cb: () => void) => held.push(cb), end() {}, emit() {} } as unknown as AdsCall;
      const options = { controlPlaneId: 'test', logger: logging.scope('ads'), observer, currentPush: () => undefined };
      const responder = new Responder({ generators: new Map(), logger: logging.scope('ads'), observer }, new WriteBudget());
      const stream = new DeltaStream(new XdsConnection(proxyOf('10.0.0.1', 'foo'), 'delta', 'test'), call, { options, queue: new PushQueue(1), responder });
      return { stream, timeouts: () => timeouts, release: () => held.splice(0).forEach((cb) => cb()) };
    }

    it('answers a burst of first requests in slices, letting the event loop turn between them', async () => {
      const logging = new Logging('pilot-discovery');
      logging.configure({ ...defaultLoggingOptions('pilot-discovery'), defaultOutputLevel: 'none' });
      const observer = new Proxy({}, { get: () => () => undefined }) as XdsObserver;
      // Each response costs 0.2 ms of generation: 1,000 of them, about 200 ms that /ready and every read must not wait out.
      const busy: XdsGenerator = {
        generate: () => {
          const until = performance.now() + 0.2;
          while (performance.now() < until);
          return [resource('listener')];
        },
      };
      const push = pushOf('');
      const options = { controlPlaneId: 'test', logger: logging.scope('ads'), observer, currentPush: () => push };
      const responder = new Responder({ generators: new Map([['', busy]]), logger: logging.scope('ads'), observer }, new WriteBudget());
      const written: Promise<void>[] = [];
      const streams = Array.from({ length: 1000 }, (_, i) => {
        let done!: () => void;
        written.push(new Promise<void>((resolve) => (done = resolve)));
        const call = { write: (_body: Buffer, cb: () => void) => (cb(), done()), end() {}, emit() {} } as unknown as AdsCall;
        return new DeltaStream(new XdsConnection(proxyOf(`10.0.${i >> 8}.${i & 255}`, 'foo'), 'delta', 'test'), call, { options, queue: new PushQueue(1), responder });
      });
      const counter = countEventLoopTurns();
      // As a socket's read hands them over: every request in one go.
      for (const stream of streams) stream.receive({ type_url: TypeUrl.Listener, resource_names_subscribe: [], resource_names_unsubscribe: [], initial_resource_versions: {}, response_nonce: '' });
      await Promise.all(written);
      const turns = counter.stop();
      // About 200 ms of work in slices of 20 ms: some ten turns; in one piece, one or two.
      expect(turns, 'the event loop turned while the responses were prepared').to.be.at.least(5);
      expect(turns, 'not once per response').to.be.lessThan(100);
    });

    it('fails a write gRPC has not taken within the write timeout, once, counting it', async () => {
      const { stream, timeouts, release } = streamWithHeldWrites();
      let outcome: string | undefined;
      const write = stream.write(Buffer.from('x')).then(() => (outcome = 'written'), (err: Error) => (outcome = err.message));
      stream.checkWrite(Date.now() + WRITE_TIMEOUT_MS - 1000);
      await sleep(5);
      expect(outcome).to.equal(undefined, 'not yet');
      stream.checkWrite(Date.now() + WRITE_TIMEOUT_MS + 1);
      await write;
      expect(outcome).to.equal(`write not taken within ${WRITE_TIMEOUT_MS} ms`);
      stream.checkWrite(Date.now() + 2 * WRITE_TIMEOUT_MS);
      release(); // gRPC calling back late changes nothing
      expect(timeouts()).to.equal(1);
    });

    it('completes a write when gRPC takes it, and fails the one in progress when the stream closes', async () => {
      const { stream, timeouts, release } = streamWithHeldWrites();
      const first = stream.write(Buffer.from('a'));
      release();
      await first;
      let failure: Error | undefined;
      const second = stream.write(Buffer.from('b')).catch((err: Error) => (failure = err));
      stream.close();
      await second;
      expect(failure?.message).to.equal('stream closed');
      await stream.write(Buffer.from('c')).catch((err: Error) => (failure = err));
      expect(failure?.message).to.equal('stream closed');
      stream.checkWrite(Date.now() + 2 * WRITE_TIMEOUT_MS);
      expect(timeouts()).to.equal(0);
    });
  });

  describe('XdsServer from a dependency-injection container', () => {
    const quiet: XdsObserver = {
      connections() {},
      pushed() {},
      encoded() {},
      sendError() {},
      buildError() {},
      rejected() {},
      rejectCleared() {},
      expiredNonce() {},
      queued() {},
      converged() {},
      internalError() {},
      writeTimeout() {},
    };

    function options(): XdsServerOptions {
      const logging = new Logging('pilot-discovery');
      logging.configure({ ...defaultLoggingOptions('pilot-discovery'), defaultOutputLevel: 'warn' });
      const push = pushOf('');
      const name = 'outbound|80||a.example.com';
      const cluster = { name, body: encodeResource(TypeUrl.Cluster, name, { name }) };
      const generator: XdsGenerator = { generate: (r) => (r.typeUrl === TypeUrl.Cluster ? [cluster] : []) };
      return {
        generators: new Map([['', generator]]),
        deltaEnabled: false,
        maxReceiveMessageBytes: 4 * 1024 * 1024,
        maxConcurrentStreams: 100,
        keepaliveIntervalMs: 30_000,
        keepaliveTimeoutMs: 10_000,
        pushConcurrency: 4,
        newStreamsPerSecond: 1000,
        controlPlaneId: 'test',
        logger: logging.scope('ads'),
        observer: quiet,
        currentPush: () => push,
      };
    }

    it('is resolved with the options bound to XdsServerOptionsToken, and serves ADS', async () => {
      const container = new Container();
      container.bind(XdsServerOptionsToken).toConstantValue(options());
      container.bind(XdsServer).toSelf().inSingletonScope();
      const server = container.get(XdsServer);
      expect(server).to.be.instanceOf(XdsServer);
      const port = await server.start('127.0.0.1', 0);
      const client = new SotwClient(port, sidecarNode('10.8.3.1', 'foo'));
      try {
        client.send({ type_url: TypeUrl.Cluster });
        const res = await client.next(TypeUrl.Cluster);
        expect(resourcesOf(res).map((r) => r.name)).to.deep.equal(['outbound|80||a.example.com']);
        expect(server.connections()).to.have.length(1);
      } finally {
        client.close();
        await server.stop(100);
      }
    });

    it('tells connection listeners of each admitted stream and its close, past a listener that throws', async () => {
      const events: string[] = [];
      const throwing = { connected: () => { throw new Error('boom'); }, disconnected: () => { throw new Error('boom'); } };
      const recording = {
        connected: (c: XdsConnection) => events.push(`+${c.proxy.namespace}/${c.proxy.ips[0]}`),
        disconnected: (c: XdsConnection) => events.push(`-${c.proxy.namespace}/${c.proxy.ips[0]}`),
      };
      const server = new XdsServer({ ...options(), connectionListeners: [throwing, recording] });
      const port = await server.start('127.0.0.1', 0);
      const client = new SotwClient(port, sidecarNode('10.8.3.2', 'bar'));
      try {
        client.send({ type_url: TypeUrl.Cluster });
        await client.next(TypeUrl.Cluster);
        expect(events).to.deep.equal(['+bar/10.8.3.2']);
        client.close();
        const deadline = Date.now() + 5000;
        while (events.length < 2 && Date.now() < deadline) await sleep(10);
        expect(events).to.deep.equal(['+bar/10.8.3.2', '-bar/10.8.3.2']);
      } finally {
        client.close();
        await server.stop(100);
      }
    });

    it('is still constructed directly', () => {
      expect(new XdsServer(options()).connections()).to.deep.equal([]);
    });
  });
});
