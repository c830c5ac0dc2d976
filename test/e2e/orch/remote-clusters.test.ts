/**
 * Multicluster by remote secrets through a running daemon: two in-process API servers are two
 * clusters, the daemon runs on the first, and a `mesh/multiCluster=true` Secret there holds the
 * second's orchestrator config. A Service of both clusters gets endpoints from both (each
 * labelled with its cluster) in the EDS a raw ADS client receives; removing the key or the
 * Secret removes the remote endpoints; a remote API server that fails at start-up delays
 * readiness only up to PILOT_REMOTE_CLUSTER_TIMEOUT; insecure configs and the daemon's own
 * cluster ID are refused with a log naming the Secret.
 */
import * as fs from 'node:fs';
import { expect } from 'chai';
import { resourcesOf, sidecarNode, SotwClient } from '../../helpers/ads-client';
import { RunningDaemon } from '../../helpers/daemon';
import { httpGet } from '../../helpers/http';
import { daemonMetric, kubectl, OrchWorld, runPod, startOrchDaemon, startOrchWorld, waitFor } from '../../helpers/orch-mesh';
import { runCli } from '../../helpers/run-cli';

const CDS = 'type.googleapis.com/envoy.config.cluster.v3.Cluster';
const EDS = 'type.googleapis.com/envoy.config.endpoint.v3.ClusterLoadAssignment';
const CART = 'cart.shop.svc.cluster.local';
const STOCK = 'stock.shop.svc.cluster.local';
const CLUSTER_LABEL = 'topology.mesh.io/cluster';

// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Any = any;

/** A Service `name` of shop with one ready pod at `ip` behind it (pod, Service, EndpointSlice). */
async function serviceWithPod(world: OrchWorld, name: string, pod: string, ip: string): Promise<void> {
  const s = world.server;
  const created = await s.create({ apiVersion: 'v1', kind: 'Pod', metadata: { name: pod, namespace: 'shop', labels: { app: name } }, spec: { containers: [{ name: 'app', image: 'app' }] } });
  await s.update({ ...created, status: { phase: 'Running', podIP: ip, podIPs: [{ ip }] } });
  if (!s.get('v1', 'Service', 'shop', name)) {
    await s.create({ apiVersion: 'v1', kind: 'Service', metadata: { name, namespace: 'shop' }, spec: { selector: { app: name }, ports: [{ name: 'http', port: 80, targetPort: 8080 }] } });
  }
  await s.create({
    apiVersion: 'discovery.k8s.io/v1',
    kind: 'EndpointSlice',
    metadata: { name: `${name}-${pod}`, namespace: 'shop', labels: { 'kubernetes.io/service-name': name } },
    addressType: 'IPv4',
    endpoints: [{ addresses: [ip], conditions: { ready: true }, targetRef: { kind: 'Pod', name: pod, namespace: 'shop' } }],
    ports: [{ name: 'http', port: 8080, protocol: 'TCP' }],
  });
}

/** A remote secret as `meshctl create-remote-secret` writes it: data keys are cluster IDs. */
function remoteSecret(name: string, clusters: Record<string, string>): string {
  const data = Object.entries(clusters)
    .map(([id, config]) => `  ${id}: ${Buffer.from(config).toString('base64')}`)
    .join('\n');
  return `apiVersion: v1
kind: Secret
metadata:
  name: ${name}
  namespace: mesh-system
  labels: { mesh/multiCluster: "true" }
data:
${data}
`;
}

async function registry(daemon: RunningDaemon): Promise<Any[]> {
  return JSON.parse((await httpGet(daemon.httpPort, '/debug/registryz')).body);
}

/** `address cluster` of each endpoint of `host` port 80 in /debug/registryz, sorted. */
async function endpointClusters(daemon: RunningDaemon, host: string): Promise<string[]> {
  const svc = (await registry(daemon)).find((s) => s.hostname === host);
  return ((svc?.endpoints['80'] ?? []) as Any[]).map((e) => `${e.address} ${e.labels[CLUSTER_LABEL]}`).sort();
}

function edsAddresses(response: Any): string[] {
  return resourcesOf(response)[0].endpoints.flatMap((l: Any) => l.lb_endpoints.map((e: Any) => e.endpoint.address.socket_address.address)).sort();
}

async function twoClusters(): Promise<{ local: OrchWorld; remote: OrchWorld; remoteConfig: string }> {
  const local = await startOrchWorld({ simulateCluster: false, namespaces: ['shop', 'mesh-system'] });
  const remote = await startOrchWorld({ simulateCluster: false, namespaces: ['shop'] });
  await serviceWithPod(local, 'cart', 'cart-a', '10.1.0.1');
  await serviceWithPod(remote, 'cart', 'cart-b', '10.2.0.1');
  await serviceWithPod(remote, 'stock', 'stock-b', '10.2.0.9');
  return { local, remote, remoteConfig: fs.readFileSync(remote.kubeconfig, 'utf8') };
}

describe('remote clusters by remote secrets through a running daemon (end to end)', function () {
  this.timeout(60_000);
  let local: OrchWorld;
  let remote: OrchWorld;
  let remoteConfig: string;
  let daemon: RunningDaemon;
  let client: SotwClient;

  before(async () => {
    ({ local, remote, remoteConfig } = await twoClusters());
    // Subsets by cluster label: what a DestinationRule can route by, and proof the label reaches EDS.
    await local.apply(`apiVersion: networking.mesh.io/v1
kind: DestinationRule
metadata: { name: cart, namespace: shop }
spec:
  host: ${CART}
  subsets:
  - { name: a, labels: { ${CLUSTER_LABEL}: cluster-a } }
  - { name: b, labels: { ${CLUSTER_LABEL}: cluster-b } }
`);
    await local.apply(remoteSecret('remote-b', { 'cluster-b': remoteConfig }));
    daemon = await startOrchDaemon(local, ['--clusterID', 'cluster-a'], { PILOT_ENABLE_TELEMETRY_LABEL: 'true', PILOT_ENDPOINT_TELEMETRY_LABEL: 'true' });
  });

  after(async () => {
    client?.close();
    await daemon?.stop();
    await local?.close();
    await remote?.close();
  });

  it('adds the remote cluster before it is ready and counts both clusters', async () => {
    const out = daemon.output();
    expect(out).to.match(/remote cluster cluster-b added from Secret mesh-system\/remote-b: orchestrator API https:\/\/127\.0\.0\.1:\d+/);
    expect(out.indexOf('remote clusters: 1 of 1 synced')).to.be.within(0, out.indexOf('daemon ready'));
    expect(await daemonMetric(daemon, 'meshd_managed_clusters', { cluster_type: 'local' })).to.equal(1);
    expect(await daemonMetric(daemon, 'meshd_managed_clusters', { cluster_type: 'remote' })).to.equal(1);
    expect(await daemonMetric(daemon, 'remote_cluster_sync_timeouts_total')).to.equal(0);
  });

  it('lists its own cluster and the remote one, with the secret and sync status, at /debug/clusterz', async () => {
    expect(JSON.parse((await httpGet(daemon.httpPort, '/debug/clusterz')).body)).to.deep.equal([
      { id: 'cluster-a', secretName: '', syncStatus: 'synced' },
      { id: 'cluster-b', secretName: 'mesh-system/remote-b', syncStatus: 'synced' },
    ]);
  });

  it('is listed by meshctl remote-clusters for each daemon pod, reached through a port-forward to its monitoring port', async () => {
    // Two replicas of the daemon, as pods of the local cluster whose port 15014 is this daemon's.
    for (const name of ['meshd-1', 'meshd-2']) await runPod(local.server, { name, namespace: 'mesh-system', labels: { app: 'meshd', 'mesh.io/rev': 'default' }, ports: { 15014: daemon.monitoringPort } });
    const r = await runCli('meshctl', ['remote-clusters', '--orchconfig', local.kubeconfig]);
    expect(r.stderr).to.equal('');
    expect(r.code).to.equal(0);
    expect(r.stdout).to.equal(
      [
        'NAME          SECRET                   STATUS     MESHD',
        'cluster-a                              synced     meshd-1.mesh-system',
        'cluster-b     mesh-system/remote-b     synced     meshd-1.mesh-system',
        'cluster-a                              synced     meshd-2.mesh-system',
        'cluster-b     mesh-system/remote-b     synced     meshd-2.mesh-system',
        '',
      ].join('\n'),
    );
    const revision = await runCli('meshctl', ['remote-clusters', '-r', 'canary', '--orchconfig', local.kubeconfig]);
    expect([revision.code, revision.stdout, revision.stderr.trim()]).to.deep.equal([1, '', 'Error: no control plane pod (label app=meshd,mesh.io/rev=canary) is running in namespace mesh-system']);
    local.server.portForward.unregister('mesh-system', 'meshd-2');
    const unreachable = await runCli('meshctl', ['remote-clusters', '--orchconfig', local.kubeconfig]);
    expect(unreachable.code).to.equal(1);
    expect(unreachable.stderr).to.contain('port 15014 of pod meshd-2 in namespace mesh-system');
    for (const name of ['meshd-1', 'meshd-2']) await local.server.delete('v1', 'Pod', 'mesh-system', name);
  });

  it('merges a Service of both clusters: the local definition, endpoints of both labelled with their cluster; a remote-only Service too', async () => {
    expect(await endpointClusters(daemon, CART)).to.deep.equal(['10.1.0.1 cluster-a', '10.2.0.1 cluster-b']);
    const cart = (await registry(daemon)).find((s) => s.hostname === CART);
    expect(cart.source).to.equal('Service/shop/cart');
    expect(cart.addresses).to.deep.equal([local.server.get('v1', 'Service', 'shop', 'cart').spec.clusterIP]);
    expect(await endpointClusters(daemon, STOCK)).to.deep.equal(['10.2.0.9 cluster-b']);
  });

  it('gives a raw ADS client endpoints of both clusters, and per-cluster subsets by the cluster label', async () => {
    client = new SotwClient(daemon.grpcPort, sidecarNode('10.1.0.50', 'shop'));
    client.send({ type_url: CDS });
    const cds = await client.next(CDS);
    expect(resourcesOf(cds).map((c) => c.name)).to.include.members([`outbound|80||${CART}`, `outbound|80|a|${CART}`, `outbound|80|b|${CART}`, `outbound|80||${STOCK}`]);
    client.ack(cds);
    const names = [`outbound|80||${CART}`, `outbound|80|a|${CART}`, `outbound|80|b|${CART}`];
    const byName = new Map<string, string[]>();
    const telemetry: string[] = [];
    for (const name of names) {
      client.send({ type_url: EDS, resource_names: [name] });
      const eds = await client.next(EDS);
      client.ack(eds, [name]);
      byName.set(resourcesOf(eds)[0].cluster_name, edsAddresses(eds));
      if (name === names[0]) {
        for (const l of resourcesOf(eds)[0].endpoints) for (const e of l.lb_endpoints) telemetry.push(e.metadata.filter_metadata.mesh.fields.workload.string_value);
      }
    }
    // The workload telemetry names each endpoint's own cluster.
    expect(telemetry.sort()).to.deep.equal(['cart-a;shop;cart;;cluster-a', 'cart-b;shop;cart;;cluster-b']);
    expect(byName.get(`outbound|80||${CART}`)).to.deep.equal(['10.1.0.1', '10.2.0.1']);
    expect(byName.get(`outbound|80|a|${CART}`)).to.deep.equal(['10.1.0.1']);
    expect(byName.get(`outbound|80|b|${CART}`)).to.deep.equal(['10.2.0.1']);
    client.send({ type_url: EDS, resource_names: [`outbound|80||${CART}`] });
    client.ack(await client.next(EDS), [`outbound|80||${CART}`]);

    // A new endpoint in the remote cluster reaches the client as an EDS push.
    await serviceWithPod(remote, 'cart', 'cart-b2', '10.2.0.2');
    const update = await waitFor(() => client.next(EDS, 5000), (r) => edsAddresses(r).length === 3, 'the new remote endpoint in EDS');
    expect(edsAddresses(update)).to.deep.equal(['10.1.0.1', '10.2.0.1', '10.2.0.2']);
    client.ack(update, [`outbound|80||${CART}`]);
  });

  it("refuses a remote cluster with the daemon's own cluster ID, and an insecure config (exec plugin), naming the Secret", async () => {
    await local.apply(remoteSecret('self', { 'cluster-a': remoteConfig }));
    const marker = `/tmp/mesh-exec-ran-${process.pid}`;
    const insecure = remoteConfig.replace(/- name: orch-test\n {2}user:\n[\s\S]*?(?=\n[a-z]|$)/, '- name: orch-test\n  user:\n    exec: { apiVersion: client.authentication.k8s.io/v1, command: /bin/sh, args: ["-c", "touch ${marker}"] }');
    expect(insecure).to.contain('exec:');
    await local.apply(remoteSecret('insecure', { 'cluster-x': insecure }));
    await waitFor(() => daemon.output(), (o) => o.includes('Secret mesh-system/insecure key "cluster-x"'), 'the refusal of the insecure config');
    const out = daemon.output();
    expect(out).to.match(/Secret mesh-system\/self key "cluster-a": cluster ID cluster-a is this daemon's own cluster \(--clusterID\)/);
    expect(out).to.match(/Secret mesh-system\/insecure key "cluster-x": the orchestrator config uses exec \(user orch-test\), not allowed for remote clusters \(allow with PILOT_INSECURE_MULTICLUSTER_ORCHCONFIG_OPTIONS\)/);
    expect(await daemonMetric(daemon, 'meshd_managed_clusters', { cluster_type: 'remote' })).to.equal(1);
    expect(fs.existsSync(marker), 'the exec plugin never ran').to.equal(false);
  });

  it('restarts a cluster under its new key when the Secret changes, and removes it with the Secret', async () => {
    await local.apply(remoteSecret('remote-b', { 'cluster-c': remoteConfig }));
    await waitFor(() => endpointClusters(daemon, CART), (e) => e.includes('10.2.0.1 cluster-c') && !e.some((x) => x.endsWith('cluster-b')), 'the endpoints under cluster-c');
    expect(daemon.output()).to.match(/remote cluster cluster-b removed: its key was removed from Secret mesh-system\/remote-b/);
    expect(await daemonMetric(daemon, 'meshd_managed_clusters', { cluster_type: 'remote' })).to.equal(1);
    // The restart is pushed too: the client has the remote endpoints back before the Secret goes.
    const back = await waitFor(() => client.next(EDS, 5000), (u) => edsAddresses(u).length === 3, 'EDS with the restarted cluster');
    client.ack(back, [`outbound|80||${CART}`]);

    const r = await kubectl(local.kubeconfig, ['delete', 'secret', '-n', 'mesh-system', 'remote-b']);
    expect(r.code, r.stderr).to.equal(0);
    const update = await waitFor(() => client.next(EDS, 5000), (u) => edsAddresses(u).length === 1, 'EDS without the remote endpoints');
    expect(edsAddresses(update)).to.deep.equal(['10.1.0.1']);
    expect(await endpointClusters(daemon, CART)).to.deep.equal(['10.1.0.1 cluster-a']);
    expect((await registry(daemon)).some((s) => s.hostname === STOCK), 'the remote-only Service is gone').to.equal(false);
    expect(await daemonMetric(daemon, 'meshd_managed_clusters', { cluster_type: 'remote' })).to.equal(0);
    expect(await daemonMetric(daemon, 'meshd_managed_clusters', { cluster_type: 'local' })).to.equal(1);
  });
});

describe('a remote cluster that does not sync at start-up (PILOT_REMOTE_CLUSTER_TIMEOUT, end to end)', function () {
  this.timeout(60_000);
  let local: OrchWorld;
  let remote: OrchWorld;
  let daemon: RunningDaemon;

  before(async () => {
    let remoteConfig: string;
    ({ local, remote, remoteConfig } = await twoClusters());
    await local.apply(remoteSecret('remote-b', { 'cluster-b': remoteConfig }));
    remote.server.faults.failRequests(500);
  });

  after(async () => {
    await daemon?.stop();
    await local?.close();
    await remote?.close();
  });

  it('becomes ready after the timeout without it, counts it, and merges it once it syncs', async () => {
    const started = Date.now();
    daemon = await startOrchDaemon(local, ['--clusterID', 'cluster-a'], { PILOT_REMOTE_CLUSTER_TIMEOUT: '1s' });
    const out = daemon.output();
    const late = out.indexOf('remote cluster cluster-b (Secret mesh-system/remote-b) has not synced within PILOT_REMOTE_CLUSTER_TIMEOUT (1s): becoming ready without it');
    expect(late, out).to.be.within(0, out.indexOf('daemon ready'));
    // Start-up waited the timeout, not the default 30 s.
    expect(Date.now() - started).to.be.below(15_000);
    expect(await daemonMetric(daemon, 'remote_cluster_sync_timeouts_total')).to.equal(1);
    expect(await daemonMetric(daemon, 'meshd_managed_clusters', { cluster_type: 'remote' })).to.equal(1);
    expect(await endpointClusters(daemon, CART)).to.deep.equal(['10.1.0.1 cluster-a']);
    const clusterz = async () => JSON.parse((await httpGet(daemon.httpPort, '/debug/clusterz')).body);
    expect((await clusterz())[1]).to.deep.equal({ id: 'cluster-b', secretName: 'mesh-system/remote-b', syncStatus: 'timeout' });

    remote.server.faults.clear();
    await waitFor(() => endpointClusters(daemon, CART), (e) => e.includes('10.2.0.1 cluster-b'), 'the remote endpoints after the faults clear', 40_000);
    expect(await endpointClusters(daemon, STOCK)).to.deep.equal(['10.2.0.9 cluster-b']);
    await waitFor(() => daemon.output(), (o) => /remote cluster cluster-b synced: 2 services/.test(o), 'the log of the late sync', 10_000);
    expect((await clusterz())[1].syncStatus).to.equal('synced');
    expect(await daemonMetric(daemon, 'remote_cluster_sync_timeouts_total')).to.equal(1);
  });
});
