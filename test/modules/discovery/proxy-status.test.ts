import { expect } from 'chai';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { sidecarNode, SotwClient } from '../../helpers/ads-client';
import { RunningDaemon, startDaemon } from '../../helpers/daemon';
import { runCli } from '../../helpers/run-cli';

/**
 * `meshctl proxy-status` against a real daemon (issue 17): the command asks for
 * `mesh.io/debug/syncz` on an ADS stream of its own, and the daemon answers with the sync
 * status of each proxy connected, from the nonces it sent and the proxy acknowledged.
 */

const CDS = 'type.googleapis.com/envoy.config.cluster.v3.Cluster';
const LDS = 'type.googleapis.com/envoy.config.listener.v3.Listener';

describe('meshctl proxy-status against pilot-discovery over xDS', function () {
  this.timeout(60_000);
  let dir: string;
  let daemon: RunningDaemon;
  const clients: SotwClient[] = [];

  before(async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'mesh-ps-'));
    daemon = await startDaemon(['--configDir', dir], { ENABLE_DEBUG_ENDPOINT_AUTH: 'false' });
  });

  after(async () => {
    for (const c of clients) c.close();
    await daemon?.stop();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  const connect = (ip: string, namespace: string) => {
    const client = new SotwClient(daemon.grpcPort, sidecarNode(ip, namespace, { CLUSTER_ID: 'Orch', MESH_VERSION: '1.2.3' }));
    clients.push(client);
    return client;
  };
  const proxyStatus = async (...args: string[]) => {
    const result = await runCli('meshctl', ['proxy-status', '--xds-address', `127.0.0.1:${daemon.grpcPort}`, '--plaintext', ...args]);
    expect(result.stderr, 'stderr').to.equal('');
    expect(result.code, 'exit code').to.equal(0);
    return result.stdout;
  };
  const rowsOf = (table: string) => table.trimEnd().split('\n').map((line) => line.split(/ {2,}/));

  it('lists a proxy that subscribed to CDS and acknowledged it as SYNCED for CDS', async () => {
    const client = connect('10.17.0.1', 'foo');
    client.send({ type_url: CDS });
    client.ack(await client.next(CDS));

    const json = JSON.parse(await proxyStatus('-o', 'json'));
    const id = 'sidecar~10.17.0.1~app.foo~foo.svc.cluster.local';
    expect(json.typeUrl).to.equal('type.googleapis.com/envoy.service.status.v3.ClientConfig');
    const meshd = json.controlPlane.identifier as string;
    expect(meshd).to.match(/^meshd-/);
    // Only the proxy: the command's own debug stream is no proxy.
    expect(json.resources.map((r: { node: { id: string } }) => r.node.id)).to.deep.equal([id]);
    const [config] = json.resources;
    expect(config.node.metadata).to.deep.equal({ CLUSTER_ID: 'Orch', MESH_VERSION: '1.2.3', NAMESPACE: 'foo' });
    const status = Object.fromEntries(config.genericXdsConfigs.map((g: { typeUrl: string; configStatus: string }) => [g.typeUrl, g.configStatus]));
    expect(status[CDS]).to.equal('SYNCED');
    expect(status[LDS]).to.equal('NOT_SENT');

    const table = await proxyStatus();
    expect(rowsOf(table)).to.deep.equal([
      ['NAME', 'CLUSTER', 'MESHD', 'VERSION', 'SUBSCRIBED TYPES'],
      [id, 'Orch', meshd, '1.2.3', '5 (CDS,LDS,EDS,RDS,ECDS)'],
    ]);
    expect(table.split('\n')[0]).to.equal(`NAME${' '.repeat(id.length - 4 + 5)}CLUSTER     MESHD${' '.repeat(meshd.length)}VERSION     SUBSCRIBED TYPES`);

    expect(rowsOf(await proxyStatus('--verbosity', '1'))).to.deep.equal([
      ['NAME', 'CLUSTER', 'CDS', 'LDS', 'EDS', 'RDS', 'ECDS', 'MESHD', 'VERSION'],
      [id, 'Orch', 'SYNCED', 'NOT_SENT', 'NOT_SENT', 'NOT_SENT', 'NOT_SENT', meshd, '1.2.3'],
    ]);
  });

  it('says STALE while a response is not acknowledged and ERROR once it is rejected; -n filters by namespace', async () => {
    const client = connect('10.17.0.2', 'bar');
    client.send({ type_url: CDS });
    const cds = await client.next(CDS);
    client.send({ type_url: LDS });
    const lds = await client.next(LDS);
    client.nack(lds, 'bad listener');
    await client.nothingFor(200);

    const rows = rowsOf(await proxyStatus('-n', 'bar', '--verbosity', '1'));
    expect(rows).to.have.length(2);
    expect(rows[1].slice(0, 4)).to.deep.equal(['sidecar~10.17.0.2~app.bar~bar.svc.cluster.local', 'Orch', 'STALE', 'ERROR']);

    client.ack(cds);
    await client.nothingFor(200);
    expect(rowsOf(await proxyStatus('-n', 'bar', '--verbosity', '1'))[1][2]).to.equal('SYNCED');
    // Both proxies without -n, sorted by ID.
    expect(rowsOf(await proxyStatus()).slice(1).map((r) => r[0])).to.deep.equal([
      'sidecar~10.17.0.1~app.foo~foo.svc.cluster.local',
      'sidecar~10.17.0.2~app.bar~bar.svc.cluster.local',
    ]);
  });

  it('asks for --xds-address in one line when it is absent', async () => {
    const result = await runCli('meshctl', ['proxy-status']);
    expect(result.code).to.not.equal(0);
    expect(result.stdout).to.equal('');
    const lines = result.stderr.trimEnd().split('\n');
    expect(lines, result.stderr).to.have.length(1);
    expect(lines[0]).to.contain('--xds-address');
  });
});
