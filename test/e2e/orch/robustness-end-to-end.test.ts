/**
 * Watch robustness through a running daemon: the API server drops every watch, forgets its
 * history (410 Gone), answers 500 for a while, and restarts. The daemon relists and converges
 * to the same config and registry, without restarting, and without a push storm: relisting
 * unchanged objects pushes nothing, and a change made during an outage costs one push.
 */
import { expect } from 'chai';
import { resourcesOf, sidecarNode, SotwClient } from '../../helpers/ads-client';
import { RunningDaemon } from '../../helpers/daemon';
import { httpGet } from '../../helpers/http';
import { daemonMetric, OrchWorld, startOrchDaemon, startOrchWorld, waitFor } from '../../helpers/orch-mesh';

const CDS = 'type.googleapis.com/envoy.config.cluster.v3.Cluster';
const LDS = 'type.googleapis.com/envoy.config.listener.v3.Listener';
const EDS = 'type.googleapis.com/envoy.config.endpoint.v3.ClusterLoadAssignment';
const CART = 'cart.shop.svc.cluster.local';

const WORLD = `apiVersion: apps/v1
kind: Deployment
metadata: { name: cart, namespace: shop }
spec:
  replicas: 3
  selector: { matchLabels: { app: cart } }
  template:
    metadata: { labels: { app: cart } }
    spec:
      containers: [{ name: app, image: app, ports: [{ containerPort: 8080, name: http }] }]
---
apiVersion: v1
kind: Service
metadata: { name: cart, namespace: shop }
spec:
  selector: { app: cart }
  ports: [{ name: http, port: 80, targetPort: 8080 }]
---
apiVersion: security.mesh.io/v1
kind: AuthorizationPolicy
metadata: { name: allow-alice, namespace: shop }
spec:
  selector: { matchLabels: { app: cart } }
  action: ALLOW
  rules: [{ from: [{ source: { principals: ["cluster.local/ns/shop/sa/alice"] } }] }]
---
apiVersion: networking.mesh.io/v1
kind: DestinationRule
metadata: { name: cart, namespace: shop }
spec:
  host: cart.shop.svc.cluster.local
  subsets: [{ name: v1, labels: { app: cart } }]
`;

describe('watch robustness: drops, 410, 500s and a restart of the API server (end to end)', function () {
  this.timeout(120_000);
  let world: OrchWorld;
  let daemon: RunningDaemon;
  let client: SotwClient;
  let responses = 0;

  /** Config and registry as the daemon serves them (what must converge). */
  async function state(): Promise<string> {
    const config = JSON.parse((await httpGet(daemon.httpPort, '/debug/configz')).body);
    const registry = JSON.parse((await httpGet(daemon.httpPort, '/debug/registryz')).body).filter((s: { namespace: string }) => s.namespace === 'shop');
    return JSON.stringify({ config, registry });
  }

  const pushes = () => daemonMetric(daemon, 'pilot_push_triggers');

  /** Reads and acks whatever the daemon sends for `ms`; returns how many responses came. */
  async function drain(ms: number): Promise<number> {
    let n = 0;
    const deadline = Date.now() + ms;
    for (;;) {
      const r = await client.nothingFor(Math.max(1, deadline - Date.now()));
      if (!r) return n;
      n++;
      responses++;
      client.ack(r, r.type_url === EDS ? [`outbound|80||${CART}`] : []);
    }
  }

  /** The informers are all watching again: the API server has the daemon's watches open. */
  async function watching(): Promise<void> {
    // 10 config kinds + 5 registry resources.
    await waitFor(() => world.server.watchCount, (n) => n >= 15, 'the daemon to watch again', 40_000);
  }

  before(async () => {
    world = await startOrchWorld({ namespaces: ['shop'] });
    await world.apply(WORLD);
    await waitFor(() => world.server.list('discovery.k8s.io/v1', 'EndpointSlice', 'shop').flatMap((s) => s.endpoints ?? []).length, (n) => n === 3, 'three endpoints');
    daemon = await startOrchDaemon(world);
    client = new SotwClient(daemon.grpcPort, sidecarNode('10.8.0.9', 'shop'));
    client.send({ type_url: CDS });
    client.ack(await client.next(CDS));
    client.send({ type_url: LDS });
    client.ack(await client.next(LDS));
    client.send({ type_url: EDS, resource_names: [`outbound|80||${CART}`] });
    const eds = await client.next(EDS);
    client.ack(eds, [`outbound|80||${CART}`]);
    expect(resourcesOf(eds)[0].endpoints.flatMap((l: { lb_endpoints: unknown[] }) => l.lb_endpoints)).to.have.length(3);
    await drain(500);
    await watching();
  });

  after(async () => {
    client?.close();
    await daemon?.stop();
    await world?.close();
  });

  it('dropped watches: re-watches from where it was; no push', async () => {
    const before = { state: await state(), pushes: await pushes(), lists: world.server.requests.count({ verb: 'list' }) };
    world.server.faults.dropWatches();
    await watching();
    expect(await drain(1000)).to.equal(0);
    expect(await pushes()).to.equal(before.pushes);
    expect(await state()).to.equal(before.state);
    // Resumed from its resourceVersions: no list needed.
    expect(world.server.requests.count({ verb: 'list' })).to.equal(before.lists);
  });

  it('410 Gone (history compacted): relists everything, pushes nothing for unchanged objects', async () => {
    const before = { state: await state(), pushes: await pushes(), lists: world.server.requests.count({ verb: 'list' }) };
    // Watches cannot come back until the history they would resume from is gone: something
    // unrelated changes meanwhile, then the history is compacted.
    world.server.faults.failRequests(500, { match: /watch=true/ });
    world.server.faults.dropWatches();
    await world.server.create({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'unrelated', namespace: 'shop' }, data: { a: '1' } });
    world.server.faults.compact();
    await new Promise((r) => setTimeout(r, 200));
    world.server.faults.clear();
    await watching();
    await waitFor(() => world.server.requests.count({ verb: 'list' }) - before.lists, (n) => n >= 15, 'a relist of every resource');
    expect(await drain(1000)).to.equal(0);
    expect(await pushes()).to.equal(before.pushes);
    expect(await state()).to.equal(before.state);
  });

  it('500s for a while: backs off, then catches up with what changed meanwhile in one push', async () => {
    const before = { pushes: await pushes(), errors: await daemonMetric(daemon, 'controller_sync_errors_total') };
    world.server.faults.failRequests(500, { forMs: 3000 });
    world.server.faults.dropWatches();
    // Meanwhile (while the daemon cannot see it) the policy changes, and the history is forgotten.
    const ap = world.server.get('security.mesh.io/v1', 'AuthorizationPolicy', 'shop', 'allow-alice');
    await world.server.update({ ...ap, spec: { ...ap.spec, rules: [{ from: [{ source: { principals: ['cluster.local/ns/shop/sa/carol'] } }] }] } });
    world.server.faults.compact();
    const started = Date.now();
    const during = world.server.requests.log.length;
    await new Promise((r) => setTimeout(r, 3000));
    // Backing off: far fewer than one try per informer per 100 ms.
    expect(world.server.requests.log.length - during).to.be.below(15 * 10);
    await watching();
    const rulesNow = async () => JSON.stringify(JSON.parse((await httpGet(daemon.httpPort, '/debug/configz?kind=AuthorizationPolicy')).body).AuthorizationPolicy[0].spec.rules);
    const rules = await waitFor(rulesNow, (r) => r.includes('sa/carol'), 'the change made during the outage', 40_000);
    expect(rules).to.not.include('sa/alice');
    expect(Date.now() - started).to.be.below(40_000);
    expect(await daemonMetric(daemon, 'controller_sync_errors_total')).to.be.greaterThan(before.errors);
    await drain(1000);
    const triggered = (await pushes()) - before.pushes;
    expect(triggered).to.be.within(1, 2);
  });

  it('a restart of the API server: reconnects, converges, and follows changes again', async () => {
    const before = { state: await state(), pushes: await pushes() };
    await world.server.restart();
    await watching();
    expect(await drain(1000)).to.equal(0);
    expect(await pushes()).to.equal(before.pushes);
    expect(await state()).to.equal(before.state);

    // Still alive to changes: one replica less is one EDS push.
    const deployment = world.server.get('apps/v1', 'Deployment', 'shop', 'cart');
    await world.server.update({ ...deployment, spec: { ...deployment.spec, replicas: 2 } });
    const update = await client.next(EDS, 10_000);
    client.ack(update, [`outbound|80||${CART}`]);
    expect(resourcesOf(update)[0].endpoints.flatMap((l: { lb_endpoints: unknown[] }) => l.lb_endpoints)).to.have.length(2);
    // The daemon is the one started at the beginning.
    expect(daemon.output()).to.not.match(/daemon ready[\s\S]*daemon ready/);
  });
});
