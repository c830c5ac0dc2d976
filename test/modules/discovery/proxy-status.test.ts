import { expect } from 'chai';
import * as fs from 'node:fs';
import * as net from 'node:net';
import * as os from 'node:os';
import * as path from 'node:path';
import { sidecarNode, SotwClient } from '../../helpers/ads-client';
import { RunningAgent, startAgent } from '../../helpers/agent';
import { RunningDaemon, startDaemon } from '../../helpers/daemon';
import { httpGet } from '../../helpers/http';
import { REPO_ROOT, runCli } from '../../helpers/run-cli';
import { usesSharedLoopbackNetwork } from '../../helpers/shared-network';

usesSharedLoopbackNetwork();

/**
 * meshctl's xDS debug commands against a real daemon (issue 17), over its plain-text port with
 * debug authentication off (ENABLE_DEBUG_ENDPOINT_AUTH=false, as the incumbent allows): the
 * command asks on an ADS stream of its own and prints what the daemon answers. `proxy-status`
 * lists every proxy's sync status, or for one proxy compares what the daemon would send it
 * with what it has; `experimental internal-debug` prints a debug page; `version` the builds.
 */

const CDS = 'type.googleapis.com/envoy.config.cluster.v3.Cluster';
const LDS = 'type.googleapis.com/envoy.config.listener.v3.Listener';
const VERSION = (JSON.parse(fs.readFileSync(path.join(REPO_ROOT, 'package.json'), 'utf8')) as { version: string }).version;

type Obj = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

describe('meshctl proxy-status, internal-debug and version against pilot-discovery over xDS', function () {
  this.timeout(90_000);
  let dir: string;
  let daemon: RunningDaemon;
  let agent: RunningAgent;
  const clients: SotwClient[] = [];

  before(async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'mesh-ps-'));
    fs.cpSync(path.join(REPO_ROOT, 'samples', 'config'), dir, { recursive: true });
    daemon = await startDaemon(['--configDir', dir], { ENABLE_DEBUG_ENDPOINT_AUTH: 'false', POD_NAME: 'meshd-0', PILOT_DEBOUNCE_AFTER: '10ms', PILOT_DEBOUNCE_MAX: '100ms' });
  });

  after(async () => {
    for (const c of clients) c.close();
    await agent?.stop();
    await daemon?.stop();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  const connect = (ip: string, namespace: string) => {
    const client = new SotwClient(daemon.grpcPort, sidecarNode(ip, namespace, { CLUSTER_ID: 'Orch', MESH_VERSION: '1.2.3' }));
    clients.push(client);
    return client;
  };
  const meshctl = (...args: string[]) => runCli('meshctl', [...args, '--xds-address', `127.0.0.1:${daemon.grpcPort}`, '--plaintext'], { env: { TZ: 'UTC' } });
  const ok = async (...args: string[]) => {
    const result = await meshctl(...args);
    expect(result.stderr, 'stderr').to.equal('');
    expect(result.code, 'exit code').to.equal(0);
    return result.stdout;
  };
  const failing = async (...args: string[]) => {
    const result = await meshctl(...args);
    expect(result.code, 'exit code').to.equal(1);
    expect(result.stdout).to.equal('');
    const lines = result.stderr.trimEnd().split('\n');
    expect(lines, result.stderr).to.have.length(1);
    expect(lines[0]).to.match(/^Error: /);
    return lines[0].slice('Error: '.length);
  };
  const rowsOf = (table: string) => table.trimEnd().split('\n').map((line) => line.split(/ {2,}/));

  describe('proxy-status of every proxy', () => {
    it('lists a proxy that subscribed to CDS and acknowledged it as SYNCED for CDS', async () => {
      const client = connect('10.17.0.1', 'foo');
      client.send({ type_url: CDS });
      client.ack(await client.next(CDS));

      const json = JSON.parse(await ok('proxy-status', '-o', 'json'));
      const id = 'sidecar~10.17.0.1~app.foo~foo.svc.cluster.local';
      expect(json.typeUrl).to.equal('mesh.io/debug/syncz');
      expect(JSON.parse(json.controlPlane.identifier)).to.deep.include({ Component: 'meshd', ID: 'meshd-0' });
      // Only the proxy: the command's own debug stream is no proxy.
      expect(json.resources.map((r: Obj) => r.node.id)).to.deep.equal([id]);
      const [config] = json.resources;
      expect(config['@type']).to.equal('type.googleapis.com/envoy.service.status.v3.ClientConfig');
      expect(config.node.metadata).to.deep.equal({ CLUSTER_ID: 'Orch', MESH_VERSION: '1.2.3', NAMESPACE: 'foo' });
      const status = Object.fromEntries(config.genericXdsConfigs.map((g: Obj) => [g.typeUrl, g.configStatus]));
      expect(status[CDS]).to.equal('SYNCED');
      expect(status[LDS]).to.equal('NOT_SENT');

      const table = await ok('proxy-status');
      expect(rowsOf(table)).to.deep.equal([
        ['NAME', 'CLUSTER', 'MESHD', 'VERSION', 'SUBSCRIBED TYPES'],
        [id, 'Orch', 'meshd-0', '1.2.3', '5 (CDS,LDS,EDS,RDS,ECDS)'],
      ]);
      expect(table.split('\n')[0]).to.equal(`NAME${' '.repeat(id.length - 4 + 5)}CLUSTER     MESHD       VERSION     SUBSCRIBED TYPES`);

      expect(rowsOf(await ok('proxy-status', '--verbosity', '1'))).to.deep.equal([
        ['NAME', 'CLUSTER', 'CDS', 'LDS', 'EDS', 'RDS', 'ECDS', 'MESHD', 'VERSION'],
        [id, 'Orch', 'SYNCED', 'NOT_SENT', 'NOT_SENT', 'NOT_SENT', 'NOT_SENT', 'meshd-0', '1.2.3'],
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

      const rows = rowsOf(await ok('proxy-status', '-n', 'bar', '--verbosity', '1'));
      expect(rows).to.have.length(2);
      expect(rows[1].slice(0, 4)).to.deep.equal(['sidecar~10.17.0.2~app.bar~bar.svc.cluster.local', 'Orch', 'STALE', 'ERROR']);

      client.ack(cds);
      await client.nothingFor(200);
      expect(rowsOf(await ok('proxy-status', '-n', 'bar', '--verbosity', '1'))[1][2]).to.equal('SYNCED');
      // Both proxies without -n, sorted by ID.
      expect(rowsOf(await ok('proxy-status')).slice(1).map((r) => r[0])).to.deep.equal([
        'sidecar~10.17.0.1~app.foo~foo.svc.cluster.local',
        'sidecar~10.17.0.2~app.bar~bar.svc.cluster.local',
      ]);
    });

    it('refuses --xds-address with --xds-label, and --file without a proxy, in one line', async () => {
      expect(await failing('proxy-status', '--xds-label', 'app=meshd')).to.equal('give either --xds-address or --xds-label, not both');
      expect(await failing('proxy-status', '--file', 'dump.json')).to.contain('--file compares one proxy');
    });

    it('says in one line when the daemon cannot be reached, and when it does not answer in time', async () => {
      const unreachable = await runCli('meshctl', ['proxy-status', '--xds-address', '127.0.0.1:1', '--plaintext', '--timeout', '3s']);
      expect(unreachable.code).to.equal(1);
      expect(unreachable.stderr.trimEnd().split('\n')).to.have.length(1);
      expect(unreachable.stderr).to.match(/^Error: (cannot reach 127\.0\.0\.1:1|no answer from 127\.0\.0\.1:1)/);
      // A server that accepts the connection and never speaks: the deadline ends the wait.
      const sockets: net.Socket[] = [];
      const silent = net.createServer((s) => sockets.push(s));
      await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
      const port = (silent.address() as net.AddressInfo).port;
      try {
        const started = Date.now();
        const r = await runCli('meshctl', ['proxy-status', '--xds-address', `127.0.0.1:${port}`, '--plaintext', '--timeout', '2s']);
        expect(r.code).to.equal(1);
        expect(r.stderr).to.equal(`Error: no answer from 127.0.0.1:${port} within 2s\n`);
        expect(Date.now() - started).to.be.lessThan(12_000);
      } finally {
        for (const s of sockets) s.destroy();
        silent.close();
      }
    });
  });

  describe('proxy-status of one proxy: the daemon against the proxy', () => {
    let dump: Obj;
    let dumpFile: string;

    before(async () => {
      agent = await startAgent({ grpcPort: daemon.grpcPort, instanceIp: '127.0.0.61', namespace: 'foo', labels: { app: 'httpbin' }, env: { POD_NAME: 'httpbin-1' } });
      await agent.waitForLog(/built-in proxy ready/, 15_000);
      // Everything the daemon sent is acknowledged.
      const deadline = Date.now() + 10_000;
      for (;;) {
        const [proxy] = (JSON.parse(await ok('proxy-status', '-n', 'foo', '-o', 'json')).resources as Obj[]).filter((r) => r.node.id.includes('httpbin-1'));
        if (proxy && (proxy.genericXdsConfigs as Obj[]).every((g) => g.configStatus !== 'STALE')) break;
        if (Date.now() > deadline) throw new Error('the proxy did not acknowledge its config');
        await new Promise((r) => setTimeout(r, 100));
      }
      dump = JSON.parse((await httpGet(agent.adminPort, '/config_dump')).body);
      dumpFile = path.join(dir, '..', `${path.basename(dir)}-dump.json`);
      fs.writeFileSync(dumpFile, JSON.stringify(dump));
    });

    after(() => fs.rmSync(dumpFile, { force: true }));

    it('says the clusters, listeners and routes match when the proxy has what the daemon would send', async () => {
      expect(await ok('proxy-status', 'httpbin-1.foo', '--file', dumpFile)).to.equal('Clusters Match\nListeners Match\nRoutes Match\n');
      // -n names the namespace when the argument does not; the experimental alias does the same.
      expect(await ok('experimental', 'ps', 'httpbin-1', '-n', 'foo', '--file', dumpFile)).to.equal('Clusters Match\nListeners Match\nRoutes Match\n');
    });

    it('prints a unified diff of each section that differs, and when the proxy last loaded its routes', async () => {
      const changed = JSON.parse(JSON.stringify(dump)) as Obj;
      const section = (suffix: string) => (changed.configs as Obj[]).find((c) => c['@type'].endsWith(suffix))!;
      const clusters = section('ClustersConfigDump').dynamic_active_clusters as Obj[];
      const target = clusters.find((c) => c.cluster.name === 'outbound|3306||db.ratings.example.com')!;
      // Proto3 JSON as Envoy writes it (a duration as text) is read like the protobuf form.
      target.cluster.connect_timeout = '5s';
      for (const c of clusters) if (c !== target) c.cluster.connect_timeout = `${Number(c.cluster.connect_timeout?.seconds ?? 0)}s`;
      for (const [i, r] of (section('RoutesConfigDump').dynamic_route_configs as Obj[]).entries()) r.last_updated = `2020-08-04T06:22:5${i}.250Z`;
      const file = `${dumpFile}.changed`;
      fs.writeFileSync(file, JSON.stringify(changed));
      try {
        const out = await ok('proxy-status', 'httpbin-1.foo', '--file', file);
        const lines = out.split('\n');
        expect(lines.slice(0, 2)).to.deep.equal(['--- Meshd Clusters', '+++ Proxy Clusters']);
        expect(lines[2]).to.match(/^@@ -\d+,15 \+\d+,15 @@$/);
        expect(lines.filter((l) => /^[-+] /.test(l))).to.deep.equal(['-            "connectTimeout": "10s",', '+            "connectTimeout": "5s",']);
        // Seven lines of context on each side of the change.
        expect(lines.slice(3, 10).every((l) => l.startsWith(' '))).to.equal(true);
        expect(lines[12]).to.match(/^ /);
        const rest = out.slice(out.indexOf('\n\nListeners Match\n') + 2);
        expect(rest).to.equal('Listeners Match\nRoutes Match (RDS last loaded at Tue, 04 Aug 2020 06:22:52 UTC)\n');
      } finally {
        fs.rmSync(file, { force: true });
      }
    });

    it("says Routes Don't Match with the diff when the proxy lacks a route", async () => {
      const changed = JSON.parse(JSON.stringify(dump)) as Obj;
      const routes = (changed.configs as Obj[]).find((c) => c['@type'].endsWith('RoutesConfigDump'))!;
      const dropped = (routes.dynamic_route_configs as Obj[]).shift()!;
      const file = `${dumpFile}.routes`;
      fs.writeFileSync(file, JSON.stringify(changed));
      try {
        const out = await ok('proxy-status', 'httpbin-1.foo', '--file', file);
        expect(out.startsWith("Clusters Match\nListeners Match\nRoutes Don't Match\n--- Meshd Routes\n+++ Proxy Routes\n@@ -1,")).to.equal(true, out.slice(0, 300));
        expect(out).to.contain(`-            "name": ${JSON.stringify(dropped.route_config.name)},`);
        expect(out.endsWith('\n\n')).to.equal(true);
      } finally {
        fs.rmSync(file, { force: true });
      }
    });

    it('names the proxy when no daemon has it, and the file when it is no config dump', async () => {
      const bad = `${dumpFile}.bad`;
      fs.writeFileSync(bad, '{"configs": 3}');
      // Four independent refusals: the processes run at once.
      let nobody: string, notDump: string, missing: string, output: string;
      try {
        [nobody, notDump, missing, output] = await Promise.all([
          failing('proxy-status', 'nobody.nowhere', '--file', dumpFile),
          failing('proxy-status', 'httpbin-1.foo', '--file', bad),
          failing('proxy-status', 'httpbin-1.foo', '--file', `${dumpFile}.missing`),
          failing('proxy-status', 'httpbin-1.foo', '--file', dumpFile, '-o', 'json'),
        ]);
      } finally {
        fs.rmSync(bad, { force: true });
      }
      expect(nobody).to.contain('no proxy nobody.nowhere is connected to this daemon (meshd-0)');
      expect(notDump).to.equal(`${bad} is not a proxy config dump: it has no "configs" list`);
      expect(missing).to.equal(`cannot read the config dump ${dumpFile}.missing: ENOENT`);
      expect(output).to.contain('--output applies to the status of every proxy');
    });
  });

  describe('experimental internal-debug', () => {
    it('prints a debug page as indented JSON, with its query', async () => {
      const out = await ok('experimental', 'internal-debug', 'configz?kind=ServiceEntry');
      expect(out).to.match(/^\{\n {2}"ServiceEntry": \[/);
      const page = JSON.parse(out) as Record<string, Obj[]>;
      expect(Object.keys(page)).to.deep.equal(['ServiceEntry']);
      expect(page.ServiceEntry.map((s) => s.metadata.name)).to.include('ratings');
    });

    it('lists the debug types and gives a proxy config dump by proxyID', async () => {
      const list = JSON.parse(await ok('x', 'internal-debug', 'list')) as Array<{ name: string }>;
      expect(list.map((l) => l.name)).to.deep.equal(['clusterz', 'config_dump', 'config_files', 'configz', 'list', 'plugins', 'pprof', 'pprof/cmdline', 'pprof/heap', 'pprof/profile', 'registryz', 'syncz', 'version']);
      const dump = JSON.parse(await ok('x', 'internal-debug', 'config_dump?proxyID=httpbin-1.foo')) as Obj;
      expect(dump.configs.map((c: Obj) => c['@type'])).to.include('type.googleapis.com/envoy.admin.v3.ClustersConfigDump');
      // --all: every daemon's answer under its instance ID.
      const all = JSON.parse(await ok('x', 'internal-debug', 'version', '--all')) as Record<string, Obj>;
      expect(Object.keys(all)).to.deep.equal(['meshd-0']);
      expect(all['meshd-0']).to.deep.include({ Component: 'meshd', ID: 'meshd-0', Revision: 'default' });
    });

    it('names the unknown type and the known ones, and asks for a type when none is given', async () => {
      const line = await failing('x', 'internal-debug', 'nosuchz');
      expect(line).to.contain('refused the request (INVALID_ARGUMENT): unknown debug type "nosuchz"; known: clusterz, config_dump, config_files, configz, list');
      expect(await failing('x', 'internal-debug')).to.contain('debug type is required');
    });
  });

  describe('version with the control plane', () => {
    it('prints the client, control plane and data plane versions, counted per version', async () => {
      // Versions sorted as text, each with its count of proxies.
      const counts = [`${VERSION} (1 proxies)`, '1.2.3 (2 proxies)'].sort().join(', ');
      expect(await ok('experimental', 'version')).to.equal(`client version: ${VERSION}\ncontrol plane version: ${VERSION}\ndata plane version: ${counts}\n`);
    });

    it('prints them as JSON and YAML, and in full with --short=false', async () => {
      const json = JSON.parse(await ok('experimental', 'version', '-o', 'json'));
      expect(json.clientVersion.version).to.equal(VERSION);
      expect(json.meshVersion).to.have.length(1);
      expect(json.meshVersion[0]).to.deep.include({ Component: 'meshd', Revision: 'default' });
      expect(json.meshVersion[0].Info.version).to.equal(VERSION);
      expect(json.dataPlaneVersion).to.deep.equal([
        { ID: 'sidecar~10.17.0.1~app.foo~foo.svc.cluster.local', MeshVersion: '1.2.3' },
        { ID: 'sidecar~10.17.0.2~app.bar~bar.svc.cluster.local', MeshVersion: '1.2.3' },
        { ID: 'sidecar~127.0.0.61~httpbin-1.foo~foo.svc.cluster.local', MeshVersion: VERSION },
      ]);
      expect(await ok('experimental', 'version', '-o', 'yaml')).to.match(/^clientVersion:\n {2}version: /);
      const full = (await ok('experimental', 'version', '--short=false')).split('\n');
      expect(full[0]).to.match(/^client version: version\.BuildInfo\{Version:"/);
      expect(full[1]).to.match(/^meshd version: version\.BuildInfo\{Version:"/);
      expect(full[2]).to.equal('data plane version: version.ProxyInfo{ID:"sidecar~10.17.0.1~app.foo~foo.svc.cluster.local", MeshVersion:"1.2.3"}');
    });

    it('checks only the client with --remote=false', async () => {
      expect(await ok('experimental', 'version', '--remote=false')).to.equal(`${VERSION}\n`);
      const plain = await runCli('meshctl', ['version', '--remote=false']);
      expect(plain.code).to.equal(0);
      expect(plain.stdout).to.equal(`${VERSION}\n`);
    });

    it('prints the client version and fails in one line when the control plane cannot be asked', async () => {
      const r = await runCli('meshctl', ['experimental', 'version', '--xds-address', '127.0.0.1:1', '--plaintext', '--timeout', '3s']);
      expect(r.code).to.equal(1);
      expect(r.stdout).to.equal(`${VERSION}\n`);
      expect(r.stderr).to.match(/^Error: control plane version: .*127\.0\.0\.1:1.*\(--remote=false checks the client only\)\n$/);
    });
  });
});
