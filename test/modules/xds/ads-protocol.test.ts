import { expect } from 'chai';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { DeltaClient, resourcesOf, sidecarNode, SotwClient } from '../../helpers/ads-client';
import { startDaemon, RunningDaemon } from '../../helpers/daemon';
import { httpGet, metricValue } from '../../helpers/http';

const CDS = 'type.googleapis.com/envoy.config.cluster.v3.Cluster';
const EDS = 'type.googleapis.com/envoy.config.endpoint.v3.ClusterLoadAssignment';
const LDS = 'type.googleapis.com/envoy.config.listener.v3.Listener';

function service(name: string, port: number): string {
  return `apiVersion: networking.mesh.io/v1
kind: ServiceEntry
metadata: {name: ${name}, namespace: foo}
spec:
  hosts: [${name}.foo.svc.cluster.local]
  location: MESH_INTERNAL
  resolution: STATIC
  ports: [{name: http, number: ${port}, protocol: HTTP}]
  workloadSelector: {labels: {app: ${name}}}
`;
}

function workload(name: string, app: string, address: string): string {
  return `apiVersion: networking.mesh.io/v1
kind: WorkloadEntry
metadata: {name: ${name}, namespace: foo}
spec: {address: ${address}, labels: {app: ${app}}, ports: {http: 8080}}
`;
}

describe('ADS protocol: versions, nonces, ACK, NACK, delta', function () {
  this.timeout(30_000);
  let dir: string;
  let daemon: RunningDaemon;
  const clients: Array<{ close(): void }> = [];

  const metrics = async () => (await httpGet(daemon.monitoringPort, '/metrics')).body;

  before(async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'mesh-ads-'));
    fs.writeFileSync(path.join(dir, 'a.yaml'), service('alpha', 80));
    fs.writeFileSync(path.join(dir, 'w1.yaml'), workload('alpha-1', 'alpha', '10.1.0.1'));
    daemon = await startDaemon(['--configDir', dir]);
  });

  after(async () => {
    for (const c of clients) c.close();
    await daemon?.stop();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it('answers a wildcard CDS request with every cluster, versioned and with a nonce', async () => {
    const client = new SotwClient(daemon.grpcPort, sidecarNode('10.9.0.1', 'foo'));
    clients.push(client);
    client.send({ type_url: CDS });
    const res = await client.next(CDS);
    expect(res.version_info).to.be.a('string').and.not.equal('');
    expect(res.nonce).to.be.a('string').and.not.equal('');
    const names = resourcesOf(res).map((c) => c.name);
    expect(names).to.include('outbound|80||alpha.foo.svc.cluster.local');
    client.ack(res);
    // An ACK is not answered again.
    expect(await client.nothingFor(300, CDS)).to.equal(undefined);
  });

  it('counts a NACK in pilot_total_xds_rejects and pilot_xds_cds_reject, and shows it on /debug/syncz', async () => {
    const node = sidecarNode('10.9.0.2', 'foo');
    const client = new SotwClient(daemon.grpcPort, node);
    clients.push(client);
    const before = metricValue(await metrics(), 'pilot_total_xds_rejects', { type: 'cds' });
    client.send({ type_url: CDS });
    const res = await client.next(CDS);
    client.nack(res, 'cluster outbound|80||alpha.foo.svc.cluster.local: unsupported field');

    let text = '';
    for (let i = 0; i < 50; i++) {
      text = await metrics();
      if (metricValue(text, 'pilot_total_xds_rejects', { type: 'cds' }) > before) break;
      await new Promise((r) => setTimeout(r, 50));
    }
    expect(metricValue(text, 'pilot_total_xds_rejects', { type: 'cds' })).to.equal(before + 1);
    expect(metricValue(text, 'pilot_xds_cds_reject', { node: node.id })).to.equal(1);
    const syncz = JSON.parse((await httpGet(daemon.httpPort, '/debug/syncz')).body) as Array<{ proxy: string; types: Record<string, { status: string; error?: string }> }>;
    const mine = syncz.find((s) => s.proxy === node.id)!;
    expect(mine.types.cds.status).to.equal('NACKED');
    expect(mine.types.cds.error).to.match(/unsupported field/);
    expect(daemon.output()).to.match(/CDS: ACK ERROR node:sidecar~10\.9\.0\.2.*unsupported field/);

    // A later ACK of a newer response clears the gauge.
    fs.writeFileSync(path.join(dir, 'b.yaml'), service('beta', 81));
    const next = await client.next(CDS);
    client.ack(next);
    for (let i = 0; i < 50 && metricValue(await metrics(), 'pilot_xds_cds_reject', { node: node.id }) !== 0; i++) {
      await new Promise((r) => setTimeout(r, 50));
    }
    expect(metricValue(await metrics(), 'pilot_xds_cds_reject', { node: node.id })).to.equal(0);
    fs.rmSync(path.join(dir, 'b.yaml'));
  });

  it('ignores a request with an expired nonce and counts it', async () => {
    const client = new SotwClient(daemon.grpcPort, sidecarNode('10.9.0.3', 'foo'));
    clients.push(client);
    client.send({ type_url: CDS });
    let res = await client.next(CDS);
    // Let pushes from earlier tests' file changes settle before the probe; ACK the latest.
    for (let more = await client.nothingFor(400, CDS); more; more = await client.nothingFor(400, CDS)) res = more;
    client.ack(res);
    const before = metricValue(await metrics(), 'pilot_xds_expired_nonce', { type: 'cds' });
    client.send({ type_url: CDS, response_nonce: 'not-a-nonce-we-sent', version_info: res.version_info });
    expect(await client.nothingFor(300, CDS)).to.equal(undefined);
    // At least ours (a push racing the ACK above would count too).
    expect(metricValue(await metrics(), 'pilot_xds_expired_nonce', { type: 'cds' })).to.be.at.least(before + 1);
  });

  it('pushes only EDS when only endpoints change', async () => {
    const client = new SotwClient(daemon.grpcPort, sidecarNode('10.9.0.4', 'foo'));
    clients.push(client);
    const cluster = 'outbound|80||alpha.foo.svc.cluster.local';
    client.send({ type_url: CDS });
    client.ack(await client.next(CDS));
    client.send({ type_url: LDS });
    client.ack(await client.next(LDS));
    client.send({ type_url: EDS, resource_names: [cluster] });
    const eds = await client.next(EDS);
    client.ack(eds, [cluster]);
    const addresses = (r: Record<string, unknown>) =>
      JSON.stringify(resourcesOf(r)[0].endpoints).match(/10\.1\.0\.\d+/g)?.sort();
    expect(addresses(eds)).to.deep.equal(['10.1.0.1']);

    fs.writeFileSync(path.join(dir, 'w2.yaml'), workload('alpha-2', 'alpha', '10.1.0.2'));
    const update = await client.next();
    expect(update.type_url).to.equal(EDS);
    expect(addresses(update)).to.deep.equal(['10.1.0.1', '10.1.0.2']);
    client.ack(update, [cluster]);
    expect(await client.nothingFor(500)).to.equal(undefined);
  });

  it('serves delta xDS: versions per resource, then only changes and removals', async () => {
    const client = new DeltaClient(daemon.grpcPort, sidecarNode('10.9.0.5', 'foo'));
    clients.push(client);
    client.send({ type_url: CDS });
    const first = await client.next(CDS);
    const byName = new Map(resourcesOf(first).map((r) => [r.__name as string, r.__version as string]));
    expect([...byName.keys()]).to.include('outbound|80||alpha.foo.svc.cluster.local');
    for (const v of byName.values()) expect(v).to.be.a('string').and.not.equal('');
    client.ack(first);

    fs.writeFileSync(path.join(dir, 'g.yaml'), service('gamma', 82));
    const added = await client.next(CDS);
    expect(resourcesOf(added).map((r) => r.__name)).to.include('outbound|82||gamma.foo.svc.cluster.local');
    expect(resourcesOf(added).map((r) => r.__name)).not.to.include('outbound|80||alpha.foo.svc.cluster.local');
    client.ack(added);

    fs.rmSync(path.join(dir, 'g.yaml'));
    const removed = await client.next(CDS);
    expect(removed.removed_resources).to.deep.equal(['outbound|82||gamma.foo.svc.cluster.local']);
  });
});

describe('ADS without MESH_DELTA_XDS', function () {
  this.timeout(20_000);

  it('answers delta streams with UNIMPLEMENTED and still serves state of the world', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'mesh-ads-'));
    fs.writeFileSync(path.join(dir, 'a.yaml'), service('alpha', 80));
    const daemon = await startDaemon(['--configDir', dir], { MESH_DELTA_XDS: 'false' });
    try {
      const delta = new DeltaClient(daemon.grpcPort, sidecarNode('10.9.1.1', 'foo'));
      delta.send({ type_url: CDS });
      const err = await delta.next(CDS).catch((e: { code?: number }) => e);
      expect((err as { code?: number }).code).to.equal(12);
      delta.close();
      const sotw = new SotwClient(daemon.grpcPort, sidecarNode('10.9.1.2', 'foo'));
      sotw.send({ type_url: CDS });
      expect(resourcesOf(await sotw.next(CDS)).length).to.be.greaterThan(0);
      sotw.close();
    } finally {
      await daemon.stop();
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});
