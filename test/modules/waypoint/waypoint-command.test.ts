/**
 * `meshctl waypoint generate|apply|list|status|delete` against the in-process API server with
 * the Gateway API Gateway CRD installed, checked with the real kubectl.
 */
import * as path from 'node:path';
import { expect } from 'chai';
import { parse } from 'yaml';
import { kubectl, OrchWorld, startOrchWorld, waitFor } from '../../helpers/orch-mesh';
import { REPO_ROOT, runCli } from '../../helpers/run-cli';
import { Waypoints } from '../../../src/modules/waypoint';
import { orchClient } from '../diagnose/support';

const GATEWAY_CRD = path.join(REPO_ROOT, 'test', 'fixtures', 'gateway-api', 'gateway-crd.yaml');

interface Gateway {
  metadata: { name: string; namespace: string; labels?: Record<string, string> };
  spec: { gatewayClassName: string; listeners: { name: string; port: number; protocol: string }[] };
  status?: { conditions?: { type: string; status: string; reason?: string; message?: string }[] };
}

describe('meshctl waypoint against the orchestrator', function () {
  this.timeout(90_000);
  let world: OrchWorld;
  const meshctl = (...args: string[]) => runCli('meshctl', [...args, '--orchconfig', world.kubeconfig], { timeoutMs: 30_000 });
  const gateway = async (ns: string, name: string) => {
    const r = await kubectl(world.kubeconfig, ['get', 'gateways.gateway.networking.k8s.io', name, '-n', ns, '-o', 'json']);
    return r.code === 0 ? (JSON.parse(r.stdout) as Gateway) : undefined;
  };
  const setProgrammed = async (ns: string, name: string, status: 'True' | 'False') => {
    const gw = await world.server.get('gateway.networking.k8s.io/v1', 'Gateway', ns, name);
    await world.server.update({ ...gw, status: { conditions: [
      { type: 'Accepted', status: 'True', reason: 'Accepted', message: 'accepted by the mesh', lastTransitionTime: new Date().toISOString(), observedGeneration: 1 },
      { type: 'Programmed', status, reason: status === 'True' ? 'Programmed' : 'Pending', message: status === 'True' ? 'resources deployed' : 'waiting for the deployment', lastTransitionTime: new Date().toISOString(), observedGeneration: 1 },
    ] } });
  };
  const rows = (stdout: string) => stdout.trimEnd().split('\n').map((l) => l.split(/\s{2,}/));

  before(async () => {
    world = await startOrchWorld({ namespaces: ['foo', 'bar'], simulateCluster: false });
    const crd = await kubectl(world.kubeconfig, ['apply', '-f', GATEWAY_CRD]);
    expect(crd.code, crd.stderr).to.equal(0);
  });
  after(async () => world?.close());

  it('waypoint generate prints the Gateway of the waypoint class, for service traffic by default', async () => {
    // generate changes nothing, so its runs go at once.
    const [r, customRun, bad, none, bare] = await Promise.all([
      meshctl('waypoint', 'generate', '-n', 'foo'),
      meshctl('waypoint', 'generate', '-n', 'foo', '--name', 'wp2', '--for', 'workload', '-r', 'canary'),
      meshctl('waypoint', 'generate', '--for', 'everything'),
      meshctl('waypoint', 'generate', '--name', 'none'),
      // Without -n and without any cluster: no namespace, it goes where it is applied.
      runCli('meshctl', ['waypoint', 'generate', '--orchconfig', '/nonexistent/config']),
    ]);
    expect(r.code, r.stderr).to.equal(0);
    expect(parse(r.stdout)).to.deep.equal({
      apiVersion: 'gateway.networking.k8s.io/v1',
      kind: 'Gateway',
      metadata: { name: 'waypoint', namespace: 'foo', labels: { 'mesh.io/waypoint-for': 'service' } },
      spec: { gatewayClassName: 'mesh-waypoint', listeners: [{ name: 'mesh-hbone', port: 15008, protocol: 'HBONE' }] },
    });
    const custom = parse(customRun.stdout) as Gateway;
    expect(custom.metadata).to.deep.equal({ name: 'wp2', namespace: 'foo', labels: { 'mesh.io/waypoint-for': 'workload', 'mesh.io/rev': 'canary' } });
    expect(await gateway('foo', 'waypoint')).to.equal(undefined);
    expect(bad.code).to.not.equal(0);
    expect([none.code, none.stderr]).to.deep.equal([1, "Error: invalid waypoint name: 'none' is a reserved value\n"]);
    expect(bare.code, bare.stderr).to.equal(0);
    expect((parse(bare.stdout) as Gateway).metadata).to.deep.equal({ name: 'waypoint', labels: { 'mesh.io/waypoint-for': 'service' } });
  });

  it('waypoint apply -n foo --enroll-namespace creates the Gateway and labels the namespace; again it is idempotent', async () => {
    const r = await meshctl('waypoint', 'apply', '-n', 'foo', '--enroll-namespace');
    expect(r.code, r.stderr).to.equal(0);
    expect(r.stdout).to.equal('waypoint foo/waypoint applied\nnamespace foo labeled with "mesh.io/use-waypoint: waypoint"\n');
    const gw = await gateway('foo', 'waypoint');
    expect(gw?.spec.gatewayClassName).to.equal('mesh-waypoint');
    expect(gw?.spec.listeners).to.deep.equal([{ name: 'mesh-hbone', port: 15008, protocol: 'HBONE' }]);
    expect(gw?.metadata.labels).to.deep.equal({ 'mesh.io/waypoint-for': 'service' });
    const ns = await kubectl(world.kubeconfig, ['get', 'namespace', 'foo', '-o', 'jsonpath={.metadata.labels.mesh\\.io/use-waypoint}']);
    expect(ns.stdout).to.equal('waypoint');
    const again = await meshctl('waypoint', 'apply', '-n', 'foo', '--enroll-namespace');
    expect(again.code, again.stderr).to.equal(0);
  });

  it('apply refuses another traffic type or another enrollment without --overwrite', async () => {
    const other = await meshctl('waypoint', 'apply', '-n', 'foo', '--for', 'workload');
    expect(other.code).to.not.equal(0);
    expect(other.stderr).to.contain('waypoint foo/waypoint exists for "service" traffic, not "workload"; use --overwrite');
    const replaced = await meshctl('waypoint', 'apply', '-n', 'foo', '--for', 'all', '--overwrite');
    expect(replaced.code, replaced.stderr).to.equal(0);
    expect((await gateway('foo', 'waypoint'))?.metadata.labels?.['mesh.io/waypoint-for']).to.equal('all');
    const enroll = await meshctl('waypoint', 'apply', '-n', 'foo', '--name', 'second', '--enroll-namespace');
    expect(enroll.code).to.not.equal(0);
    expect(enroll.stderr).to.contain('namespace foo already uses waypoint "waypoint"');
    // Refused before anything was applied.
    expect(await gateway('foo', 'second')).to.equal(undefined);
    const created = await meshctl('waypoint', 'apply', '-n', 'foo', '--name', 'second');
    expect(created.code, created.stderr).to.equal(0);
  });

  it('list and status reflect the waypoints and their conditions; -A adds the namespace', async () => {
    let list = await meshctl('waypoint', 'list', '-n', 'foo');
    expect(list.code, list.stderr).to.equal(0);
    expect(rows(list.stdout)).to.deep.equal([['NAME', 'REVISION', 'PROGRAMMED'], ['second', 'default', 'False'], ['waypoint', 'default', 'False']]);
    await setProgrammed('foo', 'waypoint', 'True');
    const applied = await meshctl('waypoint', 'apply', '-n', 'bar', '--name', 'wp', '-r', 'canary');
    expect(applied.code, applied.stderr).to.equal(0);
    list = await meshctl('waypoint', 'list', '-A');
    expect(rows(list.stdout)).to.deep.equal([
      ['NAMESPACE', 'NAME', 'REVISION', 'PROGRAMMED'],
      ['bar', 'wp', 'canary', 'False'],
      ['foo', 'second', 'default', 'False'],
      ['foo', 'waypoint', 'default', 'True'],
    ]);
    const status = await meshctl('waypoint', 'status', '-n', 'foo');
    expect(status.code, status.stderr).to.equal(0);
    expect(rows(status.stdout)).to.deep.equal([
      ['NAME', 'STATUS', 'TYPE', 'REASON', 'MESSAGE'],
      ['second', 'Unknown', '-', 'NoStatus', 'no status reported yet'],
      ['waypoint', 'True', 'Accepted', 'Accepted', 'accepted by the mesh'],
      ['waypoint', 'True', 'Programmed', 'Programmed', 'resources deployed'],
    ]);
    const one = await meshctl('waypoint', 'status', '-n', 'foo', '--name', 'waypoint');
    expect(rows(one.stdout).slice(1).map((r) => r[0])).to.deep.equal(['waypoint', 'waypoint']);
    const missing = await meshctl('waypoint', 'status', '-n', 'foo', '--name', 'nope');
    expect(missing.code).to.not.equal(0);
    expect(missing.stderr).to.contain('waypoint foo/nope not found');
  });

  it('apply --wait returns once the Gateway is programmed', async () => {
    const run = meshctl('waypoint', 'apply', '-n', 'bar', '--name', 'wp', '-r', 'canary', '--wait');
    await setProgrammed('bar', 'wp', 'False');
    // Programmed only after meshctl has applied the Gateway and read it back at least once.
    const since = world.server.requests.log.length;
    const fromMeshctl = () => world.server.requests.log.slice(since).filter((q) => q.resource === 'gateways');
    await waitFor(() => fromMeshctl().map((q) => q.verb), (verbs) => verbs.includes('update') && verbs.lastIndexOf('get') > verbs.indexOf('update'), 'meshctl reading the Gateway after applying it', 20_000);
    await setProgrammed('bar', 'wp', 'True');
    const r = await run;
    expect(r.code, r.stderr).to.equal(0);
    expect(r.stdout).to.contain('waypoint bar/wp is ready');
    // Not a terminal: no progress on stderr.
    expect(r.stderr).to.equal('');
  });

  it('waiting gives up after its timeout, naming the waypoint and why it is not programmed', async () => {
    await setProgrammed('bar', 'wp', 'False');
    const client = orchClient(world.kubeconfig);
    try {
      const progress: string[] = [];
      const err = await new Waypoints(client).waitProgrammed('bar', 'wp', { timeoutMs: 600, intervalMs: 100, onProgress: (t) => progress.push(t) }).then(() => undefined, (e: Error) => e);
      expect(err?.message).to.equal('timed out after 1s waiting for waypoint bar/wp to be programmed (Pending: waiting for the deployment)');
      expect(progress[0]).to.equal('waiting for waypoint bar/wp to be programmed (Programmed: False)');
    } finally {
      client.stop();
    }
  });

  it('delete removes by name, by revision and --all; what is not there is named', async () => {
    const named = await meshctl('waypoint', 'delete', 'second', '-n', 'foo');
    expect(named.code, named.stderr).to.equal(0);
    expect(named.stdout).to.equal('waypoint foo/second deleted\n');
    const gone = await meshctl('waypoint', 'delete', 'second', '-n', 'foo');
    expect(gone.code).to.not.equal(0);
    expect(gone.stderr).to.contain('waypoint foo/second not found');
    const byRev = await meshctl('waypoint', 'delete', '-n', 'bar', '--revision', 'canary');
    expect(byRev.stdout).to.equal('waypoint bar/wp deleted\n');
    await waitFor(() => gateway('bar', 'wp'), (g) => g === undefined, 'bar/wp gone');
    const all = await meshctl('waypoint', 'delete', '-n', 'foo', '--all');
    expect(all.code, all.stderr).to.equal(0);
    expect(all.stdout).to.equal('waypoint foo/waypoint deleted\n');
    const list = await meshctl('waypoint', 'list', '-A');
    expect(list.stdout).to.equal('No waypoints found.\n');
    const both = await meshctl('waypoint', 'delete', 'x', '--all', '-n', 'foo');
    expect(both.code).to.not.equal(0);
  });
});
