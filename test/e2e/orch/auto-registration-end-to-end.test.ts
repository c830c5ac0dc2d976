/**
 * WorkloadGroup auto-registration through a running daemon on the orchestrator: a proxy naming
 * a group in its metadata gets a WorkloadEntry made from the group's template, kept while it is
 * connected, marked when it leaves, and removed after the grace period unless it comes back;
 * entries left behind by a daemon that died are swept; a proxy that may not register (no group,
 * no authenticated identity) gets nothing and is counted as an error.
 */
import { expect } from 'chai';
import { sidecarNode, SotwClient } from '../../helpers/ads-client';
import { RunningDaemon } from '../../helpers/daemon';
import { daemonMetric, OrchWorld, startOrchDaemon, startOrchWorld, waitFor } from '../../helpers/orch-mesh';

const CDS = 'type.googleapis.com/envoy.config.cluster.v3.Cluster';
const WE = 'networking.mesh.io/v1';

const GROUP = `apiVersion: networking.mesh.io/v1
kind: WorkloadGroup
metadata: { name: web, namespace: vm }
spec:
  metadata:
    labels: { app: web }
    annotations: { team: blue }
  template:
    serviceAccount: web-sa
    ports: { http: 8080 }
`;

describe('WorkloadGroup auto-registration (end to end)', function () {
  this.timeout(60_000);
  let world: OrchWorld;
  let daemon: RunningDaemon;
  const clients: SotwClient[] = [];

  async function connect(ip: string, metadata: Record<string, string>): Promise<SotwClient> {
    const client = new SotwClient(daemon.grpcPort, sidecarNode(ip, 'vm', metadata));
    clients.push(client);
    client.send({ type_url: CDS });
    await client.next(CDS);
    return client;
  }
  const entry = (name: string) => world.server.get(WE, 'WorkloadEntry', 'vm', name);

  before(async () => {
    world = await startOrchWorld({ namespaces: ['vm'] });
    await world.apply(GROUP);
    daemon = await startOrchDaemon(world, [], { MESH_WORKLOAD_ENTRY_VALIDATE_IDENTITY: 'false', PILOT_WORKLOAD_ENTRY_GRACE_PERIOD: '1500ms', POD_NAME: 'meshd-a' });
  });
  afterEach(() => {
    for (const c of clients.splice(0)) c.close();
  });
  after(async () => {
    await daemon?.stop();
    await world?.close();
  });

  it('registers a connecting proxy from its group, keeps the entry while connected and removes it after the grace period', async () => {
    const client = await connect('10.9.0.7', { AUTO_REGISTER_GROUP: 'web', LABELS: JSON.stringify({ version: 'v2' }) });
    const created = await waitFor(() => entry('web-10.9.0.7'), (e) => e !== undefined, 'the WorkloadEntry');
    const group = world.server.get(WE, 'WorkloadGroup', 'vm', 'web');
    expect(created.spec).to.deep.include({ address: '10.9.0.7', serviceAccount: 'web-sa', ports: { http: 8080 } });
    expect(created.spec.labels).to.deep.equal({ app: 'web', version: 'v2' });
    expect(created.metadata.annotations).to.include({ team: 'blue', 'mesh.io/autoRegistrationGroup': 'web', 'mesh.io/workloadController': 'meshd-a' });
    expect(Date.parse(created.metadata.annotations['mesh.io/connectedAt'])).to.be.closeTo(Date.now(), 10_000);
    expect(created.metadata.ownerReferences).to.deep.equal([{ apiVersion: WE, kind: 'WorkloadGroup', name: 'web', uid: group.metadata.uid, controller: true }]);
    expect(await daemonMetric(daemon, 'auto_registration_success_total')).to.equal(1);

    client.close();
    const marked = await waitFor(() => entry('web-10.9.0.7'), (e) => e?.metadata.annotations['mesh.io/disconnectedAt'] !== undefined, 'the disconnect mark');
    expect(marked.spec.address).to.equal('10.9.0.7');
    const leftAt = Date.now();
    await waitFor(() => entry('web-10.9.0.7'), (e) => e === undefined, 'the entry to be removed', 10_000);
    expect(Date.now() - leftAt).to.be.within(500, 6000);
    expect(await daemonMetric(daemon, 'auto_registration_unregister_total')).to.equal(1);
    expect(await daemonMetric(daemon, 'auto_registration_deletes_total')).to.equal(1);
  });

  it('keeps the entry of a proxy that comes back within the grace period, without the disconnect mark', async () => {
    const first = await connect('10.9.0.8', { AUTO_REGISTER_GROUP: 'web' });
    await waitFor(() => entry('web-10.9.0.8'), (e) => e !== undefined, 'the WorkloadEntry');
    first.close();
    await waitFor(() => entry('web-10.9.0.8'), (e) => e?.metadata.annotations['mesh.io/disconnectedAt'] !== undefined, 'the disconnect mark');
    await connect('10.9.0.8', { AUTO_REGISTER_GROUP: 'web' });
    await waitFor(() => entry('web-10.9.0.8'), (e) => e !== undefined && e.metadata.annotations['mesh.io/disconnectedAt'] === undefined, 'the mark to go');
    await new Promise((r) => setTimeout(r, 2500));
    expect(entry('web-10.9.0.8'), 'still registered past the grace period').to.not.equal(undefined);
  });

  it('sweeps an entry whose daemon died disconnected longer than the grace period ago', async () => {
    const longAgo = new Date(Date.now() - 60_000).toISOString();
    await world.server.create({
      apiVersion: WE,
      kind: 'WorkloadEntry',
      metadata: {
        name: 'web-10.9.0.99',
        namespace: 'vm',
        annotations: { 'mesh.io/autoRegistrationGroup': 'web', 'mesh.io/workloadController': 'meshd-gone', 'mesh.io/connectedAt': longAgo, 'mesh.io/disconnectedAt': longAgo },
      },
      spec: { address: '10.9.0.99' },
    });
    const manual = { apiVersion: WE, kind: 'WorkloadEntry', metadata: { name: 'db-1', namespace: 'vm' }, spec: { address: '10.9.0.50' } };
    await world.server.create(manual);
    await waitFor(() => entry('web-10.9.0.99'), (e) => e === undefined, 'the sweep', 10_000);
    expect(entry('db-1'), 'an entry nobody auto-registered is never swept').to.not.equal(undefined);
  });

  it('refuses a proxy naming a group that does not exist, counting the error', async () => {
    const before = await daemonMetric(daemon, 'auto_registration_errors_total');
    await connect('10.9.0.9', { AUTO_REGISTER_GROUP: 'nope' });
    await waitFor(() => daemonMetric(daemon, 'auto_registration_errors_total'), (n) => n === before + 1, 'the error count');
    expect(daemon.output()).to.match(/names WorkloadGroup vm\/nope, which does not exist/);
    expect(world.server.list(WE, 'WorkloadEntry', 'vm').map((e) => e.metadata.name)).to.not.include('nope-10.9.0.9');
  });

  it('refuses registration without an authenticated identity while MESH_WORKLOAD_ENTRY_VALIDATE_IDENTITY is on', async () => {
    const strict = await startOrchDaemon(world, [], { PILOT_WORKLOAD_ENTRY_GRACE_PERIOD: '1s' });
    try {
      const client = new SotwClient(strict.grpcPort, sidecarNode('10.9.0.10', 'vm', { AUTO_REGISTER_GROUP: 'web' }));
      clients.push(client);
      client.send({ type_url: CDS });
      await client.next(CDS);
      await waitFor(() => daemonMetric(strict, 'auto_registration_errors_total'), (n) => n === 1, 'the error count');
      expect(strict.output()).to.match(/has no authenticated identity to register with/);
      expect(entry('web-10.9.0.10')).to.equal(undefined);
    } finally {
      await strict.stop();
    }
  });
});
