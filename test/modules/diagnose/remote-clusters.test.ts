/**
 * `remote-clusters` pieces: the daemon pods by label and revision, an answer that is not the
 * clusterz list named with its daemon, and the incumbent's table (tabwriter columns, padding 5).
 */
import * as fs from 'node:fs';
import * as http from 'node:http';
import type { AddressInfo } from 'node:net';
import * as os from 'node:os';
import * as path from 'node:path';
import { expect } from 'chai';
import { clustersTable, daemonPods, fetchClusters, PodRequest } from '../../../src/modules/diagnose';
import { OrchClient } from '../../../src/modules/orch';
import { OrchApiServer, startOrchApiServer } from '../../helpers/orch-api';
import { runPod } from '../../helpers/orch-mesh';
import { orchClient } from './support';

describe('diagnose: remote-clusters', function () {
  this.timeout(20_000);
  let server: OrchApiServer;
  let client: OrchClient;
  let answers: http.Server;
  let answer = { status: 200, body: '[]' };
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'mesh-remote-clusters-'));

  before(async () => {
    server = await startOrchApiServer({ simulateCluster: false });
    client = orchClient(server.writeKubeconfigFile(dir));
    answers = http.createServer((_req, res) => res.writeHead(answer.status).end(answer.body));
    await new Promise<void>((resolve) => answers.listen(0, '127.0.0.1', resolve));
  });
  after(async () => {
    client?.stop();
    await server?.stop();
    answers?.closeAllConnections();
    await new Promise((resolve) => answers?.close(resolve));
    fs.rmSync(dir, { recursive: true, force: true });
  });

  /** What the forwarder would carry: the request, to the test's HTTP server. */
  const request: PodRequest = (_pod, _port, req) =>
    new Promise((resolve, reject) => {
      http.get({ host: '127.0.0.1', port: (answers.address() as AddressInfo).port, path: req.path }, (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks) }));
      }).on('error', reject);
    });

  it('finds the running daemon pods of a revision, and says so when there are none', async () => {
    let error: Error | undefined;
    await daemonPods(client, 'mesh-system', '').catch((e: Error) => (error = e));
    expect(error?.message).to.equal('no control plane pod (label app=meshd) is running in namespace mesh-system');
    await runPod(server, { name: 'meshd-b', namespace: 'mesh-system', labels: { app: 'meshd', 'mesh.io/rev': 'canary' } });
    await runPod(server, { name: 'meshd-a', namespace: 'mesh-system', labels: { app: 'meshd' } });
    await runPod(server, { name: 'meshd-c', namespace: 'mesh-system', labels: { app: 'meshd' }, phase: 'Pending' });
    expect((await daemonPods(client, 'mesh-system', '')).map((p) => p.metadata?.name)).to.deep.equal(['meshd-a', 'meshd-b']);
    expect((await daemonPods(client, 'mesh-system', 'canary')).map((p) => p.metadata?.name)).to.deep.equal(['meshd-b']);
  });

  it('names the daemon when its answer is an error, not JSON, or not a list of clusters', async () => {
    const pod = { metadata: { name: 'meshd-a', namespace: 'mesh-system' } };
    const failure = async () => {
      let error: Error | undefined;
      await fetchClusters(request, pod).catch((e: Error) => (error = e));
      return error?.message;
    };
    answer = { status: 404, body: 'no such page\n' };
    expect(await failure()).to.equal('daemon meshd-a.mesh-system: /debug/clusterz answered HTTP 404: no such page');
    answer = { status: 200, body: '<html>' };
    expect(await failure()).to.equal('daemon meshd-a.mesh-system: /debug/clusterz did not answer JSON');
    answer = { status: 200, body: '{"id":"x"}' };
    expect(await failure()).to.equal('daemon meshd-a.mesh-system: /debug/clusterz did not answer a list of clusters');
    answer = { status: 200, body: '[{"id":"Orch","secretName":"","syncStatus":"synced"}]' };
    expect(await fetchClusters(request, pod)).to.deep.equal({ daemon: 'meshd-a.mesh-system', clusters: [{ id: 'Orch', secretName: '', syncStatus: 'synced' }] });
  });

  it('lays the table out as the incumbent: each column five wider than its widest cell, by daemon then cluster', () => {
    const table = clustersTable([
      { daemon: 'meshd-b.mesh-system', clusters: [{ id: 'west', secretName: 'mesh-system/remote-west', syncStatus: 'timeout' }] },
      { daemon: 'meshd-a.mesh-system', clusters: [{ id: 'west', secretName: 'mesh-system/remote-west', syncStatus: 'syncing' }, { id: 'Orch', secretName: '', syncStatus: 'synced' }] },
    ]);
    expect(table).to.equal(
      [
        'NAME     SECRET                      STATUS      MESHD',
        'Orch                                 synced      meshd-a.mesh-system',
        'west     mesh-system/remote-west     syncing     meshd-a.mesh-system',
        'west     mesh-system/remote-west     timeout     meshd-b.mesh-system',
        '',
      ].join('\n'),
    );
  });
});
