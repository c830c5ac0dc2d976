import { expect } from 'chai';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { TypeUrl } from '../../../src/modules/envoy/type-urls';
import { ChangeSet } from '../../../src/modules/model/generator';
import { newWatchState } from '../../../src/modules/xds/connection';
import { planPush } from '../../../src/modules/xds/push-plan';
import { keepRemovedResources, planDeltaResponse } from '../../../src/modules/xds/response-planner';
import { SharedEncodings } from '../../../src/modules/xds/shared-encodings';
import { DeltaClient, resourcesOf, sidecarNode } from '../../helpers/ads-client';
import { proxyOf, pushOf } from '../../helpers/push';
import { startDaemon, RunningDaemon } from '../../helpers/daemon';
import { httpGet, metricValue } from '../../helpers/http';

const CDS = 'type.googleapis.com/envoy.config.cluster.v3.Cluster';
const LDS = 'type.googleapis.com/envoy.config.listener.v3.Listener';

function service(name: string, namespace: string, ports: number[]): string {
  return `apiVersion: networking.mesh.io/v1
kind: ServiceEntry
metadata: {name: ${name}, namespace: ${namespace}}
spec:
  hosts: [${name}.${namespace}.svc.cluster.local]
  location: MESH_INTERNAL
  resolution: STATIC
  ports: [${ports.map((p) => `{name: http-${p}, number: ${p}, protocol: HTTP}`).join(', ')}]
  workloadSelector: {labels: {app: ${name}}}
`;
}

/** Proxies in namespace `c` see only their own namespace's services. */
const SIDECAR_C = `apiVersion: networking.mesh.io/v1
kind: Sidecar
metadata: {name: default, namespace: c}
spec:
  egress: [{hosts: ["./*"]}]
`;

const ALPHA = 'alpha.a.svc.cluster.local';
const RDS = 'type.googleapis.com/envoy.config.route.v3.RouteConfiguration';

/** beta's routes go to alpha without naming a port: alpha's only port while it has one, else the route's. */
const BETA_TO_ALPHA = `apiVersion: networking.mesh.io/v1
kind: VirtualService
metadata: {name: beta, namespace: b}
spec:
  hosts: [beta.b.svc.cluster.local]
  http: [{route: [{destination: {host: ${ALPHA}}}]}]
`;

/**
 * Pushes cost what changed, and proxies of one scope share encoded responses: two delta
 * sidecars in namespace `a` (one scope) and one in namespace `c`, whose Sidecar limits it to
 * its own namespace (another scope). Service alpha (namespace a) gains a port, then loses it.
 */
describe('xDS pushes scoped to what changed, with responses shared within a scope', function () {
  this.timeout(30_000);
  let dir: string;
  let daemon: RunningDaemon;
  let a1: DeltaClient;
  let a2: DeltaClient;
  let c1: DeltaClient;
  let routes: DeltaClient;
  const metrics = async () => (await httpGet(daemon.monitoringPort, '/metrics')).body;
  const reused = async (type: string) => metricValue(await metrics(), 'pilot_xds_shared_encodings', { type, result: 'reused' }) ?? 0;

  before(async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'mesh-push-scope-'));
    fs.writeFileSync(path.join(dir, 'alpha.yaml'), service('alpha', 'a', [8080]));
    fs.writeFileSync(path.join(dir, 'beta.yaml'), service('beta', 'b', [8080, 9090]));
    fs.writeFileSync(path.join(dir, 'gamma.yaml'), service('gamma', 'c', [7070]));
    fs.writeFileSync(path.join(dir, 'sidecar.yaml'), SIDECAR_C);
    fs.writeFileSync(path.join(dir, 'beta-vs.yaml'), BETA_TO_ALPHA);
    daemon = await startDaemon(['--configDir', dir]);
    a1 = new DeltaClient(daemon.grpcPort, sidecarNode('10.9.0.1', 'a'));
    a2 = new DeltaClient(daemon.grpcPort, sidecarNode('10.9.0.2', 'a'));
    c1 = new DeltaClient(daemon.grpcPort, sidecarNode('10.9.0.3', 'c'));
    routes = new DeltaClient(daemon.grpcPort, sidecarNode('10.9.0.4', 'a'));
  });

  after(async () => {
    for (const c of [a1, a2, c1, routes]) c?.close();
    await daemon?.stop();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  /** The next response of `typeUrl` on `client`, acknowledged. */
  async function nextAcked(client: DeltaClient, typeUrl: string) {
    const res = await client.next(typeUrl);
    client.ack(res);
    return res;
  }

  const names = (res: Record<string, unknown>) => resourcesOf(res).map((r) => r.__name as string);

  /** The cluster beta's virtual host on route 9090 sends to. */
  const betaTarget = (res: Record<string, unknown>) => {
    const [table] = resourcesOf(res);
    const vhost = (table.virtual_hosts as Array<Record<string, any>>).find((v) => v.name === 'beta.b.svc.cluster.local:9090'); // eslint-disable-line @typescript-eslint/no-explicit-any
    return vhost?.routes[0].route.cluster as string;
  };

  it('gives proxies of one scope one shared encoding, and another scope its own config', async () => {
    const before = await reused('cds');
    const initial = [];
    for (const client of [a1, a2, c1]) {
      client.send({ type_url: CDS });
      initial.push(await nextAcked(client, CDS));
      client.send({ type_url: LDS });
      await nextAcked(client, LDS);
    }
    const [ca1, ca2, cc1] = initial;
    expect(names(ca1)).to.include.members([`outbound|8080||${ALPHA}`, 'outbound|9090||beta.b.svc.cluster.local']);
    // The same response in one scope is one encoding: same bytes, same nonce.
    expect(ca2.nonce).to.equal(ca1.nonce);
    expect(names(ca2)).to.deep.equal(names(ca1));
    expect(await reused('cds')).to.be.greaterThan(before);
    // The other scope never gets it: its own nonce, and only its namespace's services.
    expect(cc1.nonce).to.not.equal(ca1.nonce);
    const outbound = names(cc1).filter((n) => n.startsWith('outbound|'));
    expect(outbound).to.deep.equal(['outbound|7070||gamma.c.svc.cluster.local']);
    routes.send({ type_url: RDS, resource_names_subscribe: ['9090'] });
    expect(betaTarget(await nextAcked(routes, RDS))).to.equal(`outbound|8080||${ALPHA}`);
  });

  it("sends a change to one service as that service's resources only, and nothing to a proxy outside its scope", async () => {
    fs.writeFileSync(path.join(dir, 'alpha.yaml'), service('alpha', 'a', [8080, 8081]));
    const [cds1, cds2] = [await nextAcked(a1, CDS), await nextAcked(a2, CDS)];
    // Only alpha's new cluster: beta's and alpha's unchanged one are not sent again.
    expect(names(cds1)).to.deep.equal([`outbound|8081||${ALPHA}`]);
    expect(cds1.removed_resources ?? []).to.deep.equal([]);
    expect(cds2.nonce).to.equal(cds1.nonce);
    const lds1 = await nextAcked(a1, LDS);
    expect(names(lds1)).to.deep.equal(['127.0.0.1_8081']);
    await nextAcked(a2, LDS);
    expect(await c1.nothingFor(1000)).to.equal(undefined);
    // beta's route table follows the service it routes to, though beta did not change.
    expect(betaTarget(await nextAcked(routes, RDS))).to.equal(`outbound|9090||${ALPHA}`);
  });

  it('still sends removals, and still nothing outside the scope', async () => {
    fs.writeFileSync(path.join(dir, 'alpha.yaml'), service('alpha', 'a', [8080]));
    const lds = await nextAcked(a1, LDS);
    expect(lds.removed_resources).to.deep.equal(['127.0.0.1_8081']);
    // Make before break: the cluster goes once the listener pointing at it has.
    let cds = await nextAcked(a1, CDS);
    while ((cds.removed_resources ?? []).length === 0) cds = await nextAcked(a1, CDS);
    expect(cds.removed_resources).to.deep.equal([`outbound|8081||${ALPHA}`]);
    expect(names(cds)).to.deep.equal([]);
    expect(await c1.nothingFor(1000)).to.equal(undefined);
    expect(betaTarget(await nextAcked(routes, RDS))).to.equal(`outbound|8080||${ALPHA}`);
  });
});

describe('push scope: plans, host-limited responses and shared encodings', () => {
  const change = (partial: Partial<ChangeSet>): ChangeSet => ({
    full: false, services: new Set(), endpoints: new Set(), configs: new Set(), workloadAddresses: new Set(), ...partial,
  });
  const push = pushOf(`
apiVersion: networking.mesh.io/v1
kind: ServiceEntry
metadata: {name: alpha, namespace: a}
spec:
  hosts: [${ALPHA}]
  resolution: STATIC
  ports: [{name: http, number: 80, protocol: HTTP}]
  workloadSelector: {labels: {app: alpha}}
---
apiVersion: networking.mesh.io/v1
kind: WorkloadEntry
metadata: {name: alpha-1, namespace: a}
spec: {address: 10.1.0.1, labels: {app: alpha}}
`);
  const alphaChanged = change({ services: new Set([ALPHA]), configs: new Set(['ServiceEntry/a/alpha']) });

  it("limits a delta proxy's CDS push to the changed hosts, but not for the service's own instances or state-of-the-world", () => {
    const client = proxyOf('10.9.0.1', 'a');
    const cds = planPush(alphaChanged, client, push, undefined, 'delta').get(TypeUrl.Cluster);
    expect(cds).to.deep.equal({ hosts: new Set([ALPHA]) });
    expect(planPush(alphaChanged, proxyOf('10.1.0.1', 'a'), push, undefined, 'delta').get(TypeUrl.Cluster)).to.equal('all');
    expect(planPush(alphaChanged, client, push, undefined, 'sotw').get(TypeUrl.Cluster)).to.equal('all');
    expect(planPush(change({ ...alphaChanged, configs: new Set(['ServiceEntry/a/alpha', 'DestinationRule/a/x']) }), client, push, undefined, 'delta').get(TypeUrl.Cluster)).to.equal('all');
  });

  it("removes and keeps only the changed hosts' resources in a host-limited response", () => {
    const body = (s: string) => Buffer.from(s);
    const [a80, a81, b80] = [`outbound|80||${ALPHA}`, `outbound|81||${ALPHA}`, 'outbound|80||beta.b.svc.cluster.local'];
    const watch = newWatchState(undefined);
    watch.sent.replace([{ name: a80, body: body('a80') }, { name: a81, body: body('a81') }, { name: b80, body: body('b80') }]);
    const hosts = new Set([ALPHA]);
    const changed = { name: a80, body: body('a80 v2') };
    const plan = planDeltaResponse(watch, [changed], undefined, false, hosts)!;
    expect(plan.resources.map((r) => r.name)).to.deep.equal([a80]);
    // beta's cluster was not generated, yet it is not removed: it is not in the response's hosts.
    expect(plan.removed).to.deep.equal([a81]);
    const generated = [changed];
    expect(keepRemovedResources(watch, generated, hosts)).to.equal(true);
    expect(generated.map((r) => r.name)).to.deep.equal([a80, a81]);
  });

  it('shares an encoding only between identical responses, and never twice with one stream', () => {
    const encodings = new SharedEncodings('t');
    const r = (name: string, text: string) => ({ name, body: Buffer.from(text) });
    const x = r('x', 'x1');
    const content = { protocol: 'delta' as const, typeUrl: TypeUrl.Cluster, version: 'v1', resources: [x] };
    let encoded = 0;
    const encode = (nonce: string) => {
      encoded += 1;
      return Buffer.from(nonce);
    };
    const [s1, s2, s3] = [{}, {}, {}];
    const first = encodings.encodingFor(content, s1, encode);
    expect(encodings.encodingFor({ ...content, resources: [x] }, s2, encode)).to.deep.equal({ ...first, reused: true });
    // Same name, other bytes (another scope's cluster): another encoding.
    expect(encodings.encodingFor({ ...content, resources: [r('x', 'x2')] }, s3, encode).nonce).to.not.equal(first.nonce);
    // Removals, version and protocol are part of the response.
    expect(encodings.encodingFor({ ...content, removed: ['y'] }, s3, encode).reused).to.equal(false);
    expect(encodings.encodingFor({ ...content, version: 'v2' }, s3, encode).reused).to.equal(false);
    expect(encodings.encodingFor({ ...content, protocol: 'sotw' }, s3, encode).reused).to.equal(false);
    // A stream given this response before gets a nonce of its own.
    const again = encodings.encodingFor(content, s1, encode);
    expect(again.reused).to.equal(false);
    expect(again.nonce).to.not.equal(first.nonce);
    expect(encoded).to.equal(6);
  });

  it("gives proxies whose part of a shared list changed alike one frozen response, keyed as a proxy's own copy would be", () => {
    // A routed service's six load assignments, one list for the scope; an endpoint moved in two of them.
    const names = ['8080||', '8080|v1|', '8080|v2|', '9000||', '9000|v1|', '9000|v2|'].map((p) => `outbound|${p}${ALPHA}`);
    const before = names.map((name) => ({ name, body: Buffer.from(`${name} before`) }));
    const after = Object.freeze(before.map((r, i) => (i % 3 === 1 ? r : { name: r.name, body: Buffer.from(`${r.name} after`) })));
    const proxyWith = (held: typeof before) => {
      const watch = newWatchState(new Set(names));
      watch.sent.replace(held);
      return watch;
    };
    const [one, two] = [proxyWith(before), proxyWith([...before])].map((w) => planDeltaResponse(w, after, names, false)!);
    expect(one.resources.map((r) => r.name)).to.deep.equal(names.filter((_, i) => i % 3 !== 1));
    expect(two.resources).to.equal(one.resources);
    expect(Object.isFrozen(one.resources)).to.equal(true);
    // A proxy that has other bytes gets its own changes.
    const other = planDeltaResponse(proxyWith(before.map((r, i) => (i === 0 ? after[0] : r))), after, names, false)!;
    expect(other.resources.map((r) => r.name)).to.deep.equal([names[2], names[3], names[5]]);
    // The shared list shares an encoding with an unshared copy of the same resources, and with nothing else.
    const encodings = new SharedEncodings('t');
    const content = { protocol: 'delta' as const, typeUrl: TypeUrl.ClusterLoadAssignment, version: 'v1' };
    const first = encodings.encodingFor({ ...content, resources: one.resources }, {}, (nonce) => Buffer.from(nonce));
    expect(encodings.encodingFor({ ...content, resources: [...one.resources] }, {}, () => Buffer.from('x')).nonce).to.equal(first.nonce);
    expect(encodings.encodingFor({ ...content, resources: other.resources }, {}, (nonce) => Buffer.from(nonce)).reused).to.equal(false);
    expect(encodings.encodingFor({ ...content, version: 'v2', resources: one.resources }, {}, (nonce) => Buffer.from(nonce)).reused).to.equal(false);
  });

  it('lets the least recently used encoding go first when its bytes are full, however often the newest one is asked for', () => {
    // Room for three 100-byte encodings.
    const encodings = new SharedEncodings('t', 300);
    const encode = (nonce: string) => Buffer.concat([Buffer.from(nonce), Buffer.alloc(100 - nonce.length)]);
    const content = (body: string) => ({ protocol: 'delta' as const, typeUrl: TypeUrl.Cluster, version: 'v1', resources: [{ name: 'x', body: Buffer.from(body) }] });
    const [a, b, c, d] = ['a', 'b', 'c', 'd'].map(content);
    encodings.encodingFor(a, {}, encode);
    encodings.encodingFor(b, {}, encode);
    // a is used again, by many streams in a row (a fan-out): b is now the least recently used.
    for (let i = 0; i < 5; i++) expect(encodings.encodingFor(a, {}, encode).reused).to.equal(true);
    encodings.encodingFor(c, {}, encode);
    encodings.encodingFor(d, {}, encode);
    expect(encodings.size).to.equal(3);
    expect(encodings.encodingFor(a, {}, encode).reused, 'a, used after b').to.equal(true);
    expect(encodings.encodingFor(c, {}, encode).reused).to.equal(true);
    expect(encodings.encodingFor(b, {}, encode).reused, 'b went first').to.equal(false);
  });

  it('keeps a large encoding only from the second time it is wanted, so per-proxy responses never crowd out shared ones', () => {
    const encodings = new SharedEncodings('t');
    const big = (nonce: string) => Buffer.concat([Buffer.from(nonce), Buffer.alloc(100 * 1024)]);
    const content = (body: string) => ({ protocol: 'delta' as const, typeUrl: TypeUrl.Cluster, version: 'v1', resources: [{ name: 'x', body: Buffer.from(body) }] });
    const own = content('proxy-0 own');
    const shared = content('scope');
    expect(encodings.encodingFor(own, {}, big).reused).to.equal(false);
    expect(encodings.size, 'a large response wanted once').to.equal(0);
    const second = encodings.encodingFor(shared, {}, big);
    const third = encodings.encodingFor({ ...shared }, {}, big);
    expect(third.reused).to.equal(false);
    expect(third.nonce).to.not.equal(second.nonce);
    expect(encodings.size).to.equal(1);
    expect(encodings.encodingFor({ ...shared }, {}, big)).to.deep.include({ nonce: third.nonce, reused: true });
  });
});
