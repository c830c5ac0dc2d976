import { expect } from 'chai';
import { ChangeSet } from '../../../src/modules/model/generator';
import { XdsCache } from '../../../src/modules/model/xds-cache';
import { PushContext } from '../../../src/modules/model/push-context';
import { Debouncer } from '../../../src/modules/shared/debouncer';
import { mergeChanges, planPush } from '../../../src/modules/xds/push-plan';
import { PushQueue } from '../../../src/modules/xds/push-queue';
import { RateLimiter } from '../../../src/modules/xds/rate-limiter';
import { TypeUrl } from '../../../src/modules/envoy/type-urls';
import { encodeResource, internBody } from '../../../src/modules/model/body-interning';
import { changedSubscription, internNameSet, newlySubscribed } from '../../../src/modules/xds/interning';
import { Semaphore } from '../../../src/modules/shared/semaphore';
import { SentResources } from '../../../src/modules/xds/sent-resources';
import { namesToGenerate } from '../../../src/modules/xds/response-planner';
import { newWatchState } from '../../../src/modules/xds/connection';
import { proxyOf, pushOf } from '../../helpers/push';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

function change(partial: Partial<ChangeSet>): ChangeSet {
  return { full: false, services: new Set(), endpoints: new Set(), configs: new Set(), workloadAddresses: new Set(), ...partial };
}

import { countEventLoopTurns } from '../../helpers/event-loop-turns';

describe('xDS building blocks', () => {
  describe('Debouncer (PILOT_DEBOUNCE_AFTER / PILOT_DEBOUNCE_MAX)', () => {
    it('fires once after a quiet period, with the events merged', async () => {
      const fired: number[][] = [];
      const d = new Debouncer<number[]>(200, 5000, (a, b) => [...a, ...b], (v) => fired.push(v));
      d.add([1]);
      await sleep(10);
      d.add([2]);
      await sleep(10);
      d.add([3]);
      expect(fired).to.deep.equal([]);
      await sleep(450);
      expect(fired).to.deep.equal([[1, 2, 3]]);
      d.stop();
    });

    it('fires at the maximum delay even while events keep coming', async () => {
      const fired: number[] = [];
      const d = new Debouncer<number>(50, 120, (a, b) => a + b, (v) => fired.push(v));
      const started = Date.now();
      while (Date.now() - started < 250) {
        d.add(1);
        await sleep(10);
      }
      d.stop();
      expect(fired.length).to.be.at.least(1);
      expect(fired[0]).to.be.at.least(2);
    });

    it('fires at once for an immediate event', () => {
      const fired: string[] = [];
      const d = new Debouncer<string>(1000, 5000, (a, b) => a + b, (v) => fired.push(v));
      d.add('a');
      d.add('b', true);
      expect(fired).to.deep.equal(['ab']);
      d.stop();
    });
  });

  describe('push plans: what a change means for a proxy', () => {
    const push = pushOf(`
apiVersion: networking.mesh.io/v1
kind: ServiceEntry
metadata: {name: a, namespace: foo}
spec:
  hosts: [a.foo.svc.cluster.local]
  resolution: STATIC
  location: MESH_INTERNAL
  ports: [{name: http, number: 80, protocol: HTTP}]
  endpoints: [{address: 10.0.0.1}]
`);
    const sidecar = proxyOf('10.0.0.9', 'foo');
    const grpc = proxyOf('10.0.0.8', 'foo', {}, { GENERATOR: 'grpc' });
    const watched = new Set(['outbound|80||a.foo.svc.cluster.local', 'outbound|80||b.foo.svc.cluster.local']);

    it('an endpoint change is an EDS push of that host\'s clusters only', () => {
      const plan = planPush(change({ endpoints: new Set(['a.foo.svc.cluster.local']), configs: new Set(['WorkloadEntry/foo/w']) }), grpc, push, watched);
      expect([...plan.keys()]).to.deep.equal([TypeUrl.ClusterLoadAssignment]);
      expect([...(plan.get(TypeUrl.ClusterLoadAssignment) as Set<string>)]).to.deep.equal(['outbound|80||a.foo.svc.cluster.local']);
    });

    it('gives the proxies of one subscription the same EDS names for one change, and other names for another change', () => {
      const endpointChange = change({ endpoints: new Set(['a.foo.svc.cluster.local']), configs: new Set(['WorkloadEntry/foo/w']) });
      const other = proxyOf('10.0.0.7', 'foo');
      const first = planPush(endpointChange, sidecar, push, watched, 'delta').get(TypeUrl.ClusterLoadAssignment);
      expect(planPush(endpointChange, other, push, watched, 'delta').get(TypeUrl.ClusterLoadAssignment)).to.equal(first, 'one Set for both');
      expect([...(first as Set<string>)]).to.deep.equal(['outbound|80||a.foo.svc.cluster.local']);
      const narrower = new Set(['outbound|80||b.foo.svc.cluster.local']);
      expect(planPush(endpointChange, other, push, narrower, 'delta').has(TypeUrl.ClusterLoadAssignment)).to.equal(false, 'that subscription holds none of the host\'s clusters');
      const bChange = change({ endpoints: new Set(['b.foo.svc.cluster.local']), configs: new Set(['WorkloadEntry/foo/x']) });
      expect([...(planPush(bChange, sidecar, push, watched, 'delta').get(TypeUrl.ClusterLoadAssignment) as Set<string>)]).to.deep.equal(['outbound|80||b.foo.svc.cluster.local']);
    });

    it('an endpoint change moving the proxy\'s own workload also refreshes its listeners and clusters', () => {
      const plan = planPush(change({ endpoints: new Set(['a.foo.svc.cluster.local']), workloadAddresses: new Set(['10.0.0.9']) }), sidecar, push, watched);
      expect(plan.get(TypeUrl.Listener)).to.equal('all');
      expect(plan.get(TypeUrl.Cluster)).to.equal('all');
    });

    it('a VirtualService change is LDS and RDS; a policy change is LDS; an unknown kind is a full push', () => {
      const vs = planPush(change({ configs: new Set(['VirtualService/foo/v']) }), sidecar, push, watched);
      expect([...vs.keys()].sort()).to.deep.equal([TypeUrl.Listener, TypeUrl.RouteConfiguration].sort());
      const policy = planPush(change({ configs: new Set(['AuthorizationPolicy/foo/p']) }), sidecar, push, watched);
      expect([...policy.keys()]).to.deep.equal([TypeUrl.Listener]);
      const other = planPush(change({ configs: new Set(['Telemetry/foo/t']) }), sidecar, push, watched);
      expect(other.size).to.equal(4);
    });

    it('merges queued changes', () => {
      const merged = mergeChanges(change({ endpoints: new Set(['a']) }), change({ services: new Set(['b']), configs: new Set(['X/y/z']) }));
      expect([...merged.endpoints, ...merged.services, ...merged.configs]).to.deep.equal(['a', 'b', 'X/y/z']);
      expect(merged.full).to.equal(false);
    });
  });

  describe('XdsCache', () => {
    it('serves hits, evicts by dependency, and keeps at most its size (least recently used goes)', () => {
      const events: string[] = [];
      const cache = new XdsCache({
        maxEntries: 2,
        types: new Set(['eds', 'cds']),
        observer: { read: (hit) => events.push(hit ? 'hit' : 'miss'), evicted: (reason, n) => events.push(`${reason}:${n}`), size: () => undefined },
      });
      let builds = 0;
      const build = (v: string) => () => {
        builds += 1;
        return v;
      };
      expect(cache.get('eds', 'a', ['host:a'], build('A'))).to.equal('A');
      expect(cache.get('eds', 'a', ['host:a'], build('A2'))).to.equal('A');
      expect(builds).to.equal(1);
      cache.invalidate(['host:a']);
      expect(cache.get('eds', 'a', ['host:a'], build('A3'))).to.equal('A3');
      cache.get('eds', 'b', ['host:b'], build('B'));
      cache.get('eds', 'a', ['host:a'], build('unused')); // touch a: b is now the oldest
      cache.get('cds', 'c', ['host:c'], build('C'));
      expect(cache.size).to.equal(2);
      expect(cache.get('eds', 'b', ['host:b'], build('B2'))).to.equal('B2');
      expect(events).to.include('dependency:1').and.include('size:1');
    });

    it('gives an entry read since eviction last passed it a second chance, and evicts the oldest unread one', () => {
      const cache = new XdsCache({ maxEntries: 3, types: new Set(['eds']) });
      for (const k of ['a', 'b', 'c']) cache.get('eds', k, [], () => k.toUpperCase());
      cache.get('eds', 'a', [], () => 'rebuilt');
      cache.get('eds', 'b', [], () => 'rebuilt');
      cache.get('eds', 'd', [], () => 'D'); // a and b were read: c, the oldest unread, goes
      expect(cache.size).to.equal(3);
      expect(cache.get('eds', 'a', [], () => 'rebuilt')).to.equal('A');
      expect(cache.get('eds', 'b', [], () => 'rebuilt')).to.equal('B');
      expect(cache.get('eds', 'c', [], () => 'C2')).to.equal('C2');
    });

    it('never stores what a push built before the latest invalidation (an older push\'s job still running)', () => {
      const cache = new XdsCache({ maxEntries: 100, types: new Set(['eds']) });
      const config = new Map();
      const registry = pushOf('').registry;
      const older = new PushContext('1', config, registry, { domain: 'cluster.local', rootNamespace: 'mesh-system' }, cache);
      older.cached('eds', 'b', ['host:b'], () => 'endpoints of b');
      cache.invalidate(['host:a']); // the next push's change evicts host a
      const newer = new PushContext('2', config, registry, { domain: 'cluster.local', rootNamespace: 'mesh-system' }, cache);
      let olderBuilds = 0;
      const fromOlder = () => {
        olderBuilds += 1;
        return 'endpoints of push 1';
      };
      expect(older.cached('eds', 'a', ['host:a'], fromOlder)).to.equal('endpoints of push 1');
      expect(older.cached('eds', 'a', ['host:a'], fromOlder)).to.equal('endpoints of push 1');
      expect(olderBuilds, 'the older push keeps its own value for itself').to.equal(1);
      expect(cache.size, 'and does not put it back into the cache').to.equal(1);
      expect(older.cached('eds', 'b', ['host:b'], () => 'built again'), 'what the change left alone is still read').to.equal('endpoints of b');
      expect(newer.cached('eds', 'a', ['host:a'], () => 'endpoints of push 2')).to.equal('endpoints of push 2');
      expect(newer.cached('eds', 'a', ['host:a'], () => 'built twice')).to.equal('endpoints of push 2');
      expect(cache.size).to.equal(2);
    });

    it('hands a rebuild the value the latest invalidation evicted under its key, and only that one, for entries that keep it', () => {
      const cache = new XdsCache({ maxEntries: 10, types: new Set(['rds']) });
      const seen: (string | undefined)[] = [];
      const build = (v: string) => (previous: string | undefined) => {
        seen.push(previous);
        return v;
      };
      cache.get('rds', 't', ['services'], build('table 1'), true);
      cache.get('rds', 'u', ['host:u'], build('other'), true);
      cache.get('rds', 'plain', ['services'], build('plain 1'));
      cache.invalidate(['services']);
      cache.get('rds', 't', ['services'], build('table 2'), true);
      cache.get('rds', 'new', ['services'], build('new'), true);
      cache.get('rds', 'plain', ['services'], build('plain 2'));
      // The next invalidation forgets what the one before evicted, whether or not it was rebuilt.
      cache.invalidate(['services', 'host:u']);
      cache.get('rds', 'u', ['host:u'], build('other 2'), true);
      cache.invalidate(['host:none']);
      cache.get('rds', 't', ['services'], build('table 3'), true);
      cache.clear();
      cache.get('rds', 'u', ['host:u'], build('other 3'), true);
      expect(seen).to.deep.equal([undefined, undefined, undefined, 'table 1', undefined, undefined, 'other', undefined, undefined]);
    });

    it('does not cache types that are switched off (PILOT_ENABLE_RDS_CACHE=false)', () => {
      const cache = new XdsCache({ maxEntries: 10, types: new Set(['eds']) });
      let builds = 0;
      cache.get('rds', 'r', [], () => (builds += 1));
      cache.get('rds', 'r', [], () => (builds += 1));
      expect(builds).to.equal(2);
    });
  });

  describe('PushQueue (PILOT_PUSH_THROTTLE)', () => {
    it('runs at most `limit` jobs at once, in order', async () => {
      const queue = new PushQueue(2);
      let running = 0;
      let peak = 0;
      const order: number[] = [];
      await Promise.all(
        [1, 2, 3, 4, 5].map((n) =>
          queue.run(async () => {
            running += 1;
            peak = Math.max(peak, running);
            await sleep(10);
            order.push(n);
            running -= 1;
          }),
        ),
      );
      expect(peak).to.equal(2);
      expect(order).to.deep.equal([1, 2, 3, 4, 5]);
    });

    it('lets I/O run while thousands of quick jobs go through, without a turn of the event loop per job', async () => {
      const queue = new PushQueue(100);
      const counter = countEventLoopTurns();
      // Each job busy for 0.1 ms: 3,000 of them take about 300 ms, which I/O must not wait out.
      const busy = () => {
        const until = performance.now() + 0.1;
        while (performance.now() < until);
      };
      await Promise.all(Array.from({ length: 3000 }, () => queue.run(async () => busy())));
      const turns = counter.stop();
      expect(turns, 'the event loop turned while the jobs ran').to.be.greaterThan(20);
      expect(turns, 'not once per job').to.be.lessThan(1500);
    });
  });

  describe('RateLimiter (PILOT_MAX_REQUESTS_PER_SECOND)', () => {
    it('admits a burst, then a steady rate, in arrival order', async () => {
      const limiter = new RateLimiter(20, 2);
      const started = Date.now();
      const order: number[] = [];
      await Promise.all([1, 2, 3, 4, 5, 6].map((n) => limiter.acquire().then(() => order.push(n))));
      // Two at once, four more at 20 per second: at least ~200 ms.
      expect(Date.now() - started).to.be.at.least(180);
      expect(order).to.deep.equal([1, 2, 3, 4, 5, 6]);
    });
  });

  describe('Semaphore (response bytes in flight, responses in preparation)', () => {
    it('admits writes while they fit, then in arrival order as room comes back', async () => {
      const budget = new Semaphore(100);
      const order: string[] = [];
      await budget.acquire(60);
      const b = budget.acquire(50).then(() => order.push('b'));
      const c = budget.acquire(10).then(() => order.push('c'));
      await sleep(5);
      // c would fit, but waits behind b: a large response is not starved by small ones.
      expect(order).to.deep.equal([]);
      expect(budget.waiters).to.equal(2);
      budget.release(60);
      await Promise.all([b, c]);
      expect(order).to.deep.equal(['b', 'c']);
      expect(budget.inUse).to.equal(60);
    });

    it('takes units at once only when they fit and nobody waits before (tryAcquire)', async () => {
      const budget = new Semaphore(100);
      expect(budget.tryAcquire(70)).to.equal(true);
      expect(budget.tryAcquire(40)).to.equal(false, 'does not fit');
      expect(budget.inUse).to.equal(70);
      const waiting = budget.acquire(40);
      expect(budget.tryAcquire(10)).to.equal(false, 'would fit, but the waiter came first');
      budget.release(70);
      await waiting;
      expect(budget.tryAcquire(10)).to.equal(true);
      expect(budget.inUse).to.equal(50);
    });

    it('lets a response larger than the whole budget go alone', async () => {
      const budget = new Semaphore(100);
      await budget.acquire(10);
      let big = false;
      const pending = budget.acquire(5000).then(() => (big = true));
      await sleep(5);
      expect(big).to.equal(false);
      budget.release(10);
      await pending;
      expect(budget.inUse).to.equal(100);
      budget.release(5000);
      expect(budget.inUse).to.equal(0);
    });

    it('serves thousands of waiters in arrival order, as a connect storm queues them', async () => {
      const slots = new Semaphore(2);
      const order: number[] = [];
      const all = Array.from({ length: 5000 }, (_, i) => slots.acquire().then(() => order.push(i)));
      expect(slots.waiters).to.equal(4998);
      for (let released = 0; released < 5000; released++) {
        await Promise.resolve();
        slots.release();
      }
      await Promise.all(all);
      expect(order).to.deep.equal(Array.from({ length: 5000 }, (_, i) => i));
      expect(slots.waiters).to.equal(0);
      expect(slots.inUse).to.equal(0);
      // Still right after its queue was emptied and compacted.
      await slots.acquire(2);
      let third = false;
      const later = slots.acquire().then(() => (third = true));
      expect(slots.waiters).to.equal(1);
      slots.release(2);
      await later;
      expect(third).to.equal(true);
      expect(slots.inUse).to.equal(1);
    });
  });

  describe('interned bodies and subscriptions', () => {
    it('hands back the body already known for equal bytes, and a new one for new bytes', () => {
      const cluster = (timeout: number) => ({ name: 'outbound|80||a.example.com', connect_timeout: { seconds: timeout } });
      const first = encodeResource(TypeUrl.Cluster, 'outbound|80||a.example.com', cluster(1));
      const again = encodeResource(TypeUrl.Cluster, 'outbound|80||a.example.com', cluster(1));
      const other = encodeResource(TypeUrl.Cluster, 'outbound|80||a.example.com', cluster(2));
      expect(again).to.equal(first);
      expect(other).to.not.equal(first);
      expect(other.equals(first)).to.equal(false);
      // Both variants stay known (proxies of different namespaces may get either).
      expect(encodeResource(TypeUrl.Cluster, 'outbound|80||a.example.com', cluster(1))).to.equal(first);
      // The same bytes under another type are another resource.
      expect(internBody(TypeUrl.Listener, 'outbound|80||a.example.com', Buffer.from(first))).to.not.equal(first);
    });

    it('keeps a variant per namespace of a route table every namespace has (ten namespaces, one name)', () => {
      const table = (ns: number) => encodeResource(TypeUrl.RouteConfiguration, '8080', { name: '8080', virtual_hosts: [{ name: `svc.ns-${ns}`, domains: ['svc', `svc.ns-${ns}`] }] });
      const first = Array.from({ length: 10 }, (_, ns) => table(ns));
      const again = Array.from({ length: 10 }, (_, ns) => table(ns));
      again.forEach((body, ns) => expect(body).to.equal(first[ns], `ns-${ns}'s table comes back as the same Buffer`));
    });

    it('shares the subscription after the same change, and leaves the previous one as it was', () => {
      const before = internNameSet(['a', 'b']);
      const one = changedSubscription(before, ['c'], ['a']);
      const two = changedSubscription(internNameSet(['b', 'a']), ['c'], ['a']);
      expect(two).to.equal(one);
      expect([...one].sort()).to.deep.equal(['b', 'c']);
      expect([...before].sort()).to.deep.equal(['a', 'b']);
      expect(changedSubscription(before, ['d'], [])).to.equal(internNameSet(['d', 'b', 'a']));
    });

    it('gives proxies that subscribe to the same new names one shared Set, and so one list to generate for', () => {
      const current = internNameSet(['outbound|8080||a', 'outbound|8080||b']);
      const asked = Object.freeze(['outbound|8081||a']);
      const one = newlySubscribed(current, asked);
      const two = newlySubscribed(internNameSet(['outbound|8080||b', 'outbound|8080||a']), ['outbound|8081||a']);
      expect(two).to.equal(one);
      expect([...one]).to.deep.equal(['outbound|8081||a']);
      // Only what is new counts, whatever order and repeats the request has; a wildcard is no name.
      const mixed = newlySubscribed(current, ['outbound|8080||a', 'outbound|8081||a', '*', 'outbound|8081||a']);
      expect(mixed).to.equal(one);
      expect(newlySubscribed(current, new Set(['outbound|8081||a', 'outbound|8080||b']))).to.equal(one);
      expect(newlySubscribed(current, ['outbound|8080||a']).size).to.equal(0);
      // The generator is handed the same list for both proxies (its memo goes by that list).
      const watchOf = () => newWatchState(changedSubscription(current, asked, []));
      const listOne = namesToGenerate(watchOf(), one, 'delta', TypeUrl.ClusterLoadAssignment);
      const listTwo = namesToGenerate(watchOf(), two, 'delta', TypeUrl.ClusterLoadAssignment);
      expect(listTwo).to.equal(listOne);
      expect(listOne).to.deep.equal(['outbound|8081||a']);
    });
  });

  describe('SentResources (what a stream was sent)', () => {
    const body = (text: string) => Buffer.from(text);

    it('behaves as a map across replace, set, delete and settle', () => {
      const sent = new SentResources();
      const [a, b, c, d] = ['a', 'b', 'c', 'd'].map(body);
      sent.replace([{ name: 'a', body: a }, { name: 'b', body: b }]);
      sent.set('c', c);
      sent.set('b', d);
      expect(sent.delete('a')).to.equal(true);
      expect(sent.delete('a')).to.equal(false);
      expect(sent.size).to.equal(2);
      expect(sent.get('b')).to.equal(d);
      // By position in a list: the index's own order, or any other.
      expect(sent.getAt(1, 'b')).to.equal(d);
      expect(sent.getAt(0, 'c')).to.equal(c);
      expect(sent.getAt(5, 'a')).to.equal(undefined);
      expect(sent.has('a')).to.equal(false);
      expect([...sent.keys()]).to.deep.equal(['b', 'c']);
      sent.settle();
      expect([...sent]).to.deep.equal([['b', d], ['c', c]]);
      // Deleting while walking the names, as unsubscribing does.
      for (const name of sent.keys()) sent.delete(name);
      expect(sent.size).to.equal(0);
    });

    it('folds many new names into its index, keeping every entry', () => {
      const sent = new SentResources();
      const many = Array.from({ length: 100 }, (_, i) => ({ name: `n${i}`, body: body(String(i)) }));
      for (const r of many) sent.set(r.name, r.body);
      sent.settle();
      sent.set('late', body('late'));
      sent.settle();
      expect(sent.size).to.equal(101);
      expect([...sent.keys()].slice(-2)).to.deep.equal(['n99', 'late']);
      expect(sent.get('n42')).to.equal(many[42].body);
    });

    it('holds a first response made of shared runs without copying them, and each stream\'s changes apart', () => {
      const run = (prefix: string, n: number) => Object.freeze(Array.from({ length: n }, (_, i) => ({ name: `${prefix}${i}`, body: body(`${prefix}${i}`) })));
      const shared = run('out', 300);
      const own = [run('in-a', 2), run('in-b', 2)];
      const [a, b] = own.map((mine) => {
        const sent = new SentResources();
        sent.replace([...shared, ...mine], [shared, [], mine]);
        return sent;
      });
      expect(a.size).to.equal(302);
      expect(a.get('out7')).to.equal(shared[7].body);
      expect(a.getAt(301, 'in-a1')).to.equal(own[0][1].body);
      expect(b.get('in-b0')).to.equal(own[1][0].body);
      expect(a.get('in-b0')).to.equal(undefined);
      // A push changes one shared resource and removes another on stream a only.
      const newer = body('out7 v2');
      a.set('out7', newer);
      expect(a.delete('out8')).to.equal(true);
      expect(a.get('out7')).to.equal(newer);
      expect(a.has('out8')).to.equal(false);
      expect(a.size).to.equal(301);
      expect(b.get('out7')).to.equal(shared[7].body, 'the other stream and the run itself are untouched');
      expect(shared[7].body.toString()).to.equal('out7');
      // Many changes: the stream takes an array of its own, holding the same.
      for (let i = 100; i < 200; i++) a.set(`out${i}`, body(`out${i} v2`));
      expect(a.size).to.equal(301);
      expect(a.get('out150')?.toString()).to.equal('out150 v2');
      expect(a.get('out7')).to.equal(newer);
      expect(a.has('out8')).to.equal(false);
      expect(a.get('out250')).to.equal(shared[250].body);
      a.set('out8', body('back'));
      expect([...a.keys()]).to.have.length(302);
      expect(b.get('out150')).to.equal(shared[150].body);
    });
  });
});
