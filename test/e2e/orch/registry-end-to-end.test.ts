/**
 * The Orch registry through a running daemon: Services, EndpointSlices, Pods and Nodes of the
 * in-process API server become the services and endpoints a real xDS client receives (ports,
 * protocols, labels, service accounts, locality, health), WorkloadEntries join a selector
 * Service, an endpoint change is an EDS push only, and the CA's node authorization follows
 * which pods run on which node.
 */
import { X509Certificate } from 'node:crypto';
import * as grpc from '@grpc/grpc-js';
import { expect } from 'chai';
import { caClientConstructor } from '../../../src/modules/security/ca';
import { resourcesOf, sidecarNode, SotwClient } from '../../helpers/ads-client';
import { RunningDaemon } from '../../helpers/daemon';
import { httpGet } from '../../helpers/http';
import { JwksServer, signingKey, SigningKey, startJwksServer, token } from '../../helpers/jwt';
import { daemonMetric, OrchWorld, startOrchDaemon, startOrchWorld, waitFor } from '../../helpers/orch-mesh';
import { makeCsr } from '../../modules/security/ca/helpers';

const CDS = 'type.googleapis.com/envoy.config.cluster.v3.Cluster';
const LDS = 'type.googleapis.com/envoy.config.listener.v3.Listener';
const EDS = 'type.googleapis.com/envoy.config.endpoint.v3.ClusterLoadAssignment';
const ORCH_ISSUER = 'https://orch.test';
const CART = 'cart.shop.svc.cluster.local';
const LEGACY = 'legacy.shop.svc.cluster.local';
const NODE_LABELS = { 'topology.kubernetes.io/region': 'eu-west', 'topology.kubernetes.io/zone': 'eu-west-1a', 'topology.mesh.io/subzone': 'rack-7' };

// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Any = any;

describe('Orch registry through a running daemon (end to end)', function () {
  this.timeout(60_000);
  let world: OrchWorld;
  let daemon: RunningDaemon;
  let key: SigningKey;
  let jwks: JwksServer;

  async function pod(name: string, ip: string | undefined, opts: { labels?: Record<string, string>; sa?: string; node?: string; namespace?: string } = {}): Promise<void> {
    const namespace = opts.namespace ?? 'shop';
    const created = await world.server.create({
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name, namespace, labels: opts.labels ?? {} },
      spec: { nodeName: opts.node ?? 'node-1', serviceAccountName: opts.sa, containers: [{ name: 'app', image: 'app' }] },
    });
    const status = ip ? { phase: 'Running', podIP: ip, podIPs: [{ ip }] } : { phase: 'Pending' };
    await world.server.update({ ...created, status });
  }

  function slice(name: string, service: string, endpoints: object[], ports: object[]): object {
    return {
      apiVersion: 'discovery.k8s.io/v1',
      kind: 'EndpointSlice',
      metadata: { name, namespace: 'shop', labels: { 'kubernetes.io/service-name': service } },
      addressType: 'IPv4',
      endpoints,
      ports,
    };
  }

  const podRef = (name: string) => ({ kind: 'Pod', name, namespace: 'shop' });

  async function registry(): Promise<Any[]> {
    return JSON.parse((await httpGet(daemon.httpPort, '/debug/registryz')).body);
  }

  before(async () => {
    world = await startOrchWorld({ simulateCluster: false, namespaces: ['shop'] });
    const s = world.server;
    await s.create({ apiVersion: 'v1', kind: 'Node', metadata: { name: 'node-1', labels: NODE_LABELS } });
    await s.create({ apiVersion: 'v1', kind: 'Node', metadata: { name: 'node-2', labels: { 'topology.kubernetes.io/region': 'us-east' } } });
    await pod('cart-1', '10.244.1.5', { labels: { app: 'cart', version: 'v1' }, sa: 'cart-sa' });
    await pod('cart-2', '10.244.1.6', { labels: { app: 'cart', version: 'v2' }, sa: 'cart-sa', node: 'node-2' });
    await pod('legacy-1', '10.244.2.1', { labels: { app: 'legacy' } });
    await pod('waiting', undefined, { labels: { app: 'cart' } });
    await pod('other-node', '10.244.3.1', { labels: { app: 'batch' }, sa: 'batch', node: 'node-2' });
    await s.create({
      apiVersion: 'v1',
      kind: 'Service',
      metadata: { name: 'cart', namespace: 'shop' },
      spec: {
        selector: { app: 'cart' },
        ports: [
          { name: 'http-web', port: 80, targetPort: 8080 },
          { name: 'grpc', port: 9090, targetPort: 'grpc-port' },
          { name: 'tcp-db', port: 5432 },
          { name: 'metrics', port: 9100, appProtocol: 'http' },
          { name: 'h2c', port: 9200, appProtocol: 'kubernetes.io/h2c' },
          { name: 'plain', port: 7000 },
        ],
      },
    });
    await s.create(
      slice('cart-abc', 'cart', [
        { addresses: ['10.244.1.5'], conditions: { ready: true }, targetRef: podRef('cart-1'), nodeName: 'node-1' },
        { addresses: ['10.244.1.6'], conditions: { ready: true }, targetRef: podRef('cart-2'), nodeName: 'node-2' },
      ], [
        { name: 'http-web', port: 8080, protocol: 'TCP' },
        { name: 'grpc', port: 9091, protocol: 'TCP' },
        { name: 'tcp-db', port: 5432, protocol: 'TCP' },
        { name: 'metrics', port: 9100, protocol: 'TCP' },
        { name: 'h2c', port: 9200, protocol: 'TCP' },
        { name: 'plain', port: 7000, protocol: 'TCP' },
      ]),
    );
    // A Service without selector, its slice written by hand: every kind of endpoint the registry meets.
    await s.create({ apiVersion: 'v1', kind: 'Service', metadata: { name: 'legacy', namespace: 'shop' }, spec: { ports: [{ name: 'http', port: 80 }] } });
    await s.create(
      slice('legacy-1', 'legacy', [
        { addresses: ['10.244.2.1'], conditions: { ready: true }, targetRef: podRef('legacy-1') },
        { addresses: ['10.244.2.2'], conditions: { ready: false, serving: false, terminating: false } },
        { addresses: ['10.244.2.3'], conditions: { ready: false, serving: true, terminating: true } },
        { addresses: ['10.9.9.9'] },
        { addresses: ['10.244.2.9'], conditions: { ready: true }, targetRef: podRef('not-yet') },
      ], [{ name: 'http', port: 8081, protocol: 'TCP' }]),
    );

    key = await signingKey('orch-1');
    jwks = await startJwksServer([key]);
    daemon = await startOrchDaemon(world, ['--clusterID', 'test-cluster'], {
      MESH_ENABLE_CONTROLLER_QUEUE_METRICS: 'true',
      CA_TRUSTED_NODE_ACCOUNTS: 'mesh-system/node-agent',
      JWT_RULE: JSON.stringify({ issuer: ORCH_ISSUER, jwksUri: jwks.url }),
    });
  });

  after(async () => {
    await daemon?.stop();
    await jwks?.close();
    await world?.close();
  });

  it('is ready only after the orchestrator is synced, and says so', () => {
    const out = daemon.output();
    expect(out).to.match(/orchestrator API https:\/\/127\.0\.0\.1:\d+ \(context orch-test\); watching mesh config and the Orch registry/);
    expect(out.indexOf('orchestrator synced')).to.be.greaterThan(-1);
    expect(out.indexOf('orchestrator synced')).to.be.lessThan(out.indexOf('daemon ready'));
  });

  it('maps a Service: host, cluster IP, ports and protocols from names and appProtocol', async () => {
    const cart = (await registry()).find((s) => s.hostname === CART);
    expect(cart, 'cart in /debug/registryz').to.not.equal(undefined);
    const clusterIp = world.server.get('v1', 'Service', 'shop', 'cart').spec.clusterIP;
    expect(cart.addresses).to.deep.equal([clusterIp]);
    expect(cart).to.include({ namespace: 'shop', resolution: 'STATIC', location: 'MESH_INTERNAL', source: 'Service/shop/cart' });
    expect(cart.ports.map((p: Any) => `${p.name}:${p.number}:${p.protocol}`)).to.deep.equal([
      'tcp-db:5432:TCP',
      'plain:7000:TCP',
      'http-web:80:HTTP',
      'grpc:9090:GRPC',
      'metrics:9100:HTTP',
      'h2c:9200:HTTP2',
    ].sort((a, b) => Number(a.split(':')[1]) - Number(b.split(':')[1])));
  });

  it('maps endpoints: pod labels and service account, node locality, cluster ID, the slice port', async () => {
    const cart = (await registry()).find((s) => s.hostname === CART);
    const http = cart.endpoints['80'];
    expect(http.map((e: Any) => `${e.address}:${e.port}`)).to.deep.equal(['10.244.1.5:8080', '10.244.1.6:8080']);
    const [one, two] = http;
    expect(one).to.include({ serviceAccount: 'cart-sa', namespace: 'shop', locality: 'eu-west/eu-west-1a/rack-7', workload: 'Pod/shop/cart-1' });
    expect(one.labels).to.include({ app: 'cart', version: 'v1', 'topology.mesh.io/cluster': 'test-cluster', 'topology.kubernetes.io/zone': 'eu-west-1a' });
    expect(two).to.include({ locality: 'us-east', workload: 'Pod/shop/cart-2' });
    // A named target port: the slice says which port the pod listens on.
    expect(cart.endpoints['9090'].map((e: Any) => e.port)).to.deep.equal([9091, 9091]);
  });

  it('leaves out not-ready and terminating endpoints, serves one without a pod, holds back one whose pod is unknown; counts them', async () => {
    const legacy = (await registry()).find((s) => s.hostname === LEGACY);
    const eps = legacy.endpoints['80'];
    expect(eps.map((e: Any) => e.address)).to.deep.equal(['10.244.2.1', '10.9.9.9']);
    expect(eps[1]).to.include({ serviceAccount: '', workload: 'EndpointSlice/shop/legacy-1' });
    expect(await daemonMetric(daemon, 'pilot_endpoint_not_ready')).to.equal(2);
    expect(await daemonMetric(daemon, 'endpoint_no_pod')).to.equal(1);
    expect(await daemonMetric(daemon, 'pilot_k8s_endpoints_pending_pod')).to.equal(1);
    expect(await daemonMetric(daemon, 'pilot_k8s_endpoints_with_no_pods')).to.be.at.least(1);
    // The pod without an IP yet.
    expect(await daemonMetric(daemon, 'pilot_no_ip')).to.equal(1);
    expect(await daemonMetric(daemon, 'pilot_k8s_reg_events', { type: 'Service', event: 'add' })).to.equal(2);
    expect(await daemonMetric(daemon, 'pilot_k8s_reg_events', { type: 'Pod', event: 'add' })).to.equal(5);
    expect(await daemonMetric(daemon, 'pilot_worker_queue_latency_count', { name: 'orch-registry' })).to.be.at.least(1);
    expect(await daemonMetric(daemon, 'pilot_worker_queue_duration_count', { name: 'orch-registry' })).to.be.at.least(1);
    expect(await daemonMetric(daemon, 'pilot_worker_queue_depth', { name: 'orch-registry' })).to.equal(0);

    // The awaited pod arrives: its endpoint joins, with its labels.
    await pod('not-yet', '10.244.2.9', { labels: { app: 'legacy', late: 'yes' } });
    const joined = await waitFor(registry, (r) => r.find((s) => s.hostname === LEGACY)?.endpoints['80'].length === 3, 'the pending endpoint');
    expect(joined.find((s) => s.hostname === LEGACY).endpoints['80'].find((e: Any) => e.address === '10.244.2.9').labels).to.include({ late: 'yes' });
    expect(await daemonMetric(daemon, 'pilot_k8s_endpoints_pending_pod')).to.equal(0);
  });

  it('gives a real xDS client the clusters and endpoints; an endpoint change is an EDS push only, a Service change a full one', async () => {
    const client = new SotwClient(daemon.grpcPort, sidecarNode('10.8.0.3', 'shop'));
    try {
      client.send({ type_url: CDS });
      const clusters = await client.next(CDS);
      const names = resourcesOf(clusters).map((c) => c.name);
      expect(names).to.include.members([`outbound|80||${CART}`, `outbound|9090||${CART}`, `outbound|80||${LEGACY}`]);
      const cartCluster = resourcesOf(clusters).find((c) => c.name === `outbound|80||${CART}`)!;
      expect(cartCluster.type).to.be.oneOf(['EDS', 3]);
      client.ack(clusters);
      client.send({ type_url: LDS });
      client.ack(await client.next(LDS));
      const edsNames = [`outbound|80||${CART}`];
      client.send({ type_url: EDS, resource_names: edsNames });
      const eds = await client.next(EDS);
      client.ack(eds, edsNames);
      const assignment = resourcesOf(eds)[0];
      const localities = assignment.endpoints.map((l: Any) => [l.locality.region, l.locality.zone ?? '', l.locality.sub_zone ?? ''].join('/'));
      expect(localities.sort()).to.deep.equal(['eu-west/eu-west-1a/rack-7', 'us-east//']);

      const before = { eds: await daemonMetric(daemon, 'pilot_inbound_updates', { type: 'eds' }), endpoint: await daemonMetric(daemon, 'pilot_push_triggers', { type: 'endpoint' }) };
      // A third pod joins the slice: endpoints only.
      await pod('cart-3', '10.244.1.7', { labels: { app: 'cart', version: 'v1' }, sa: 'cart-sa' });
      const current = world.server.get('discovery.k8s.io/v1', 'EndpointSlice', 'shop', 'cart-abc');
      await world.server.update({ ...current, endpoints: [...current.endpoints, { addresses: ['10.244.1.7'], conditions: { ready: true }, targetRef: podRef('cart-3') }] });
      const update = await client.next(undefined, 5000);
      expect(update.type_url).to.equal(EDS);
      const addresses = resourcesOf(update)[0].endpoints.flatMap((l: Any) => l.lb_endpoints.map((e: Any) => e.endpoint.address.socket_address.address));
      expect(addresses.sort()).to.deep.equal(['10.244.1.5', '10.244.1.6', '10.244.1.7']);
      client.ack(update, edsNames);
      expect(await client.nothingFor(1000), 'no CDS or LDS after an endpoint change').to.equal(undefined);
      expect(await daemonMetric(daemon, 'pilot_inbound_updates', { type: 'eds' })).to.be.greaterThan(before.eds);
      expect(await daemonMetric(daemon, 'pilot_push_triggers', { type: 'endpoint' })).to.be.greaterThan(before.endpoint);
      expect(await daemonMetric(daemon, 'pilot_k8s_reg_events', { type: 'EndpointSlice', event: 'update' })).to.be.at.least(1);

      // The Service gains a port: clusters and listeners are pushed again, for reason `service`.
      const services = await daemonMetric(daemon, 'pilot_push_triggers', { type: 'service' });
      const svc = world.server.get('v1', 'Service', 'shop', 'cart');
      await world.server.update({ ...svc, spec: { ...svc.spec, ports: [...svc.spec.ports, { name: 'http-admin', port: 8081 }] } });
      const cds = await client.next(CDS, 5000);
      expect(resourcesOf(cds).map((c) => c.name)).to.include(`outbound|8081||${CART}`);
      expect(await daemonMetric(daemon, 'pilot_push_triggers', { type: 'service' })).to.be.greaterThan(services);
    } finally {
      client.close();
    }
  });

  it('adds WorkloadEntries its selector picks to an orchestrator Service (PILOT_ENABLE_K8S_SELECT_WORKLOAD_ENTRIES)', async () => {
    await world.apply(`apiVersion: networking.mesh.io/v1
kind: WorkloadEntry
metadata: { name: vm-1, namespace: shop }
spec: { address: 10.50.0.1, labels: { app: cart, version: vm }, ports: { http-web: 18080 }, serviceAccount: cart-vm }
`);
    const reg = await waitFor(registry, (r) => (r.find((s) => s.hostname === CART)?.endpoints['80'] ?? []).some((e: Any) => e.address === '10.50.0.1'), 'the WorkloadEntry endpoint');
    const vm = reg.find((s) => s.hostname === CART).endpoints['80'].find((e: Any) => e.address === '10.50.0.1');
    expect(vm).to.include({ port: 18080, serviceAccount: 'cart-vm', workload: 'WorkloadEntry/shop/vm-1' });
  });

  it('lets a trusted node agent have certificates only for service accounts of pods on its node (CA_TRUSTED_NODE_ACCOUNTS)', async () => {
    const Client = caClientConstructor();
    const ca = new Client(`127.0.0.1:${daemon.secureGrpcPort}`, grpc.credentials.createSsl(Buffer.from(daemon.rootCertPem())), {
      'grpc.ssl_target_name_override': 'meshd.mesh-system.svc',
      'grpc.default_authority': 'meshd.mesh-system.svc',
    });
    const nodeAgent = await token(key, { iss: ORCH_ISSUER, sub: 'system:serviceaccount:mesh-system:node-agent', aud: 'mesh-ca', claims: { 'kubernetes.io': { node: { name: 'node-1' } } } });
    const csr = await makeCsr();
    const ask = (identity: string) =>
      new Promise<string[]>((resolve, reject) => {
        const metadata = new grpc.Metadata();
        metadata.set('authorization', `Bearer ${nodeAgent}`);
        metadata.set('impersonated-identity', identity);
        (ca as unknown as Record<string, Function>).CreateCertificate({ csr: csr.csrPem }, metadata, (err: grpc.ServiceError | null, r: { cert_chain: string[] }) =>
          err ? reject(err) : resolve(r.cert_chain),
        );
      });
    try {
      const chain = await ask('spiffe://cluster.local/ns/shop/sa/cart-sa');
      expect(new X509Certificate(chain[0]).subjectAltName).to.equal('URI:spiffe://cluster.local/ns/shop/sa/cart-sa');
      // batch runs on node-2 only.
      const denied = await ask('spiffe://cluster.local/ns/shop/sa/batch').then(
        () => undefined,
        (err: grpc.ServiceError) => err,
      );
      expect(denied?.code).to.equal(grpc.status.PERMISSION_DENIED);
      expect(denied?.details).to.match(/no workload with that identity runs on node node-1/);
    } finally {
      ca.close();
    }
  });
});
