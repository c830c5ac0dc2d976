import { expect } from 'chai';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { startDaemon, RunningDaemon } from '../../helpers/daemon';
import { EchoClient, EchoServer, grpcBootstrap, startEchoServer, XDS_BOOTSTRAP_OPTION } from '../../helpers/echo-servers';
import { httpGet, metricValue } from '../../helpers/http';

// Registers the xds: resolver and LB policies with @grpc/grpc-js.
// eslint-disable-next-line @typescript-eslint/no-require-imports
require('@grpc/grpc-js-xds').register();

const TARGET = 'xds:///echo.foo.svc.cluster.local:7070';

function serviceEntry(): string {
  return `apiVersion: networking.mesh.io/v1
kind: ServiceEntry
metadata:
  name: echo
  namespace: foo
spec:
  hosts: [echo.foo.svc.cluster.local]
  location: MESH_INTERNAL
  resolution: STATIC
  ports:
  - name: grpc
    number: 7070
    protocol: GRPC
  workloadSelector:
    labels:
      app: echo
`;
}

function workloadEntry(server: EchoServer, version: string): string {
  return `apiVersion: networking.mesh.io/v1
kind: WorkloadEntry
metadata:
  name: ${server.name}
  namespace: foo
spec:
  address: ${server.address}
  labels:
    app: echo
    version: ${version}
  ports:
    grpc: ${server.port}
`;
}

function routing(v1: number, v2: number): string {
  return `apiVersion: networking.mesh.io/v1
kind: DestinationRule
metadata:
  name: echo
  namespace: foo
spec:
  host: echo.foo.svc.cluster.local
  subsets:
  - name: v1
    labels: {version: v1}
  - name: v2
    labels: {version: v2}
---
apiVersion: networking.mesh.io/v1
kind: VirtualService
metadata:
  name: echo
  namespace: foo
spec:
  hosts: [echo.foo.svc.cluster.local]
  http:
  - route:
    - destination: {host: echo.foo.svc.cluster.local, subset: v1}
      weight: ${v1}
    - destination: {host: echo.foo.svc.cluster.local, subset: v2}
      weight: ${v2}
`;
}

/** Calls until `check` holds for a batch of calls, or fails after `timeoutMs`. */
async function eventually(client: EchoClient, check: (counts: Record<string, number>) => boolean, timeoutMs: number): Promise<Record<string, number>> {
  const deadline = Date.now() + timeoutMs;
  let counts: Record<string, number> = {};
  for (;;) {
    counts = await client.spread(10);
    if (check(counts)) return counts;
    if (Date.now() > deadline) throw new Error(`condition not met within ${timeoutMs} ms; last calls: ${JSON.stringify(counts)}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** Writes a file the way editors do: to a temporary name, then renamed over the original. */
function writeAtomically(file: string, text: string): void {
  const tmp = `${file}.tmp-${process.pid}`;
  fs.writeFileSync(tmp, text);
  fs.renameSync(tmp, file);
}

describe('proxyless gRPC clients of the daemon (@grpc/grpc-js-xds)', function () {
  this.timeout(60_000);
  let dir: string;
  let daemon: RunningDaemon;
  let a: EchoServer;
  let b: EchoServer;
  let c: EchoServer;
  const clients: EchoClient[] = [];

  const newClient = (): EchoClient => {
    const client = new EchoClient(TARGET, { [XDS_BOOTSTRAP_OPTION]: grpcBootstrap(daemon.grpcPort) });
    clients.push(client);
    return client;
  };

  before(async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'mesh-grpc-'));
    a = await startEchoServer('echo-a', '127.0.0.11');
    b = await startEchoServer('echo-b', '127.0.0.12');
    c = await startEchoServer('echo-c', '127.0.0.13');
    fs.writeFileSync(path.join(dir, 'service.yaml'), serviceEntry());
    fs.mkdirSync(path.join(dir, 'workloads'));
    fs.writeFileSync(path.join(dir, 'workloads', 'a.yaml'), workloadEntry(a, 'v1'));
    fs.writeFileSync(path.join(dir, 'workloads', 'b.yaml'), workloadEntry(b, 'v2'));
    daemon = await startDaemon(['--configDir', dir]);
  });

  after(async () => {
    if (process.env.SHOW_DAEMON_LOG) console.log(daemon?.output());
    for (const client of clients) client.close();
    await daemon?.stop();
    await Promise.all([a?.stop(), b?.stop(), c?.stop()]);
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it('spreads calls to xds:///echo.foo.svc.cluster.local:7070 across both WorkloadEntries', async () => {
    const client = newClient();
    const counts = await eventually(client, (n) => (n['echo-a'] ?? 0) > 0 && (n['echo-b'] ?? 0) > 0, 10_000);
    expect(Object.keys(counts).sort()).to.deep.equal(['echo-a', 'echo-b']);
  });

  it('follows VirtualService weights between DestinationRule subsets, live, within 2 seconds of an edit', async () => {
    const client = newClient();
    const file = path.join(dir, 'routing.yaml');
    fs.writeFileSync(file, routing(100, 0));
    await eventually(client, (n) => n['echo-a'] === 10, 5_000);
    expect(await client.spread(20)).to.deep.equal({ 'echo-a': 20 });

    const edited = Date.now();
    writeAtomically(file, routing(0, 100));
    await eventually(client, (n) => n['echo-b'] === 10, 2_000);
    expect(Date.now() - edited).to.be.below(2_000);
    expect(await client.spread(20)).to.deep.equal({ 'echo-b': 20 });
    fs.rmSync(file);
  });

  it('stops calling a removed WorkloadEntry and starts calling an added one', async () => {
    const client = newClient();
    await eventually(client, (n) => (n['echo-a'] ?? 0) > 0 && (n['echo-b'] ?? 0) > 0, 5_000);

    fs.rmSync(path.join(dir, 'workloads', 'a.yaml'));
    await eventually(client, (n) => n['echo-b'] === 10, 3_000);
    expect(await client.spread(20)).to.deep.equal({ 'echo-b': 20 });

    fs.writeFileSync(path.join(dir, 'workloads', 'c.yaml'), workloadEntry(c, 'v1'));
    await eventually(client, (n) => (n['echo-c'] ?? 0) > 0, 3_000);
    const counts = await client.spread(20);
    expect(Object.keys(counts).sort()).to.deep.equal(['echo-b', 'echo-c']);
  });

  it('keeps the previous config when a file breaks, logs where and counts it', async () => {
    const client = newClient();
    const before = await eventually(client, (n) => (n['echo-b'] ?? 0) > 0 && (n['echo-c'] ?? 0) > 0, 5_000);
    expect(Object.keys(before).sort()).to.deep.equal(['echo-b', 'echo-c']);
    const rejectedBefore = metricValue(await httpGet(daemon.monitoringPort, '/metrics'), 'pilot_total_rejected_configs');

    const since = daemon.output().length;
    const file = path.join(dir, 'workloads', 'c.yaml');
    fs.writeFileSync(file, workloadEntry(c, 'v1').replace('address: 127.0.0.13', 'address: [127.0.0.13'));
    const line = await daemon.waitForLog(/error\s+file\s+.*c\.yaml:\d+.*/, 5_000, since);
    expect(line).to.match(/workloads\/c\.yaml:\d+/);

    await new Promise((r) => setTimeout(r, 500));
    const after = await client.spread(20);
    expect(Object.keys(after).sort()).to.deep.equal(['echo-b', 'echo-c']);
    const rejectedAfter = metricValue(await httpGet(daemon.monitoringPort, '/metrics'), 'pilot_total_rejected_configs');
    expect(rejectedAfter).to.be.greaterThan(rejectedBefore);
  });

  it('shows each connected client on /debug/syncz, also through pilot-discovery request', async () => {
    const res = await httpGet(daemon.httpPort, '/debug/syncz');
    expect(res.status).to.equal(200);
    const body = JSON.parse(res.body) as Array<{ proxy: string; generator: string; types: Record<string, { status: string }> }>;
    expect(body.length).to.be.greaterThan(0);
    const entry = body[0];
    expect(entry.proxy).to.equal('sidecar~127.0.0.50~client.foo~foo.svc.cluster.local');
    expect(entry.generator).to.equal('grpc');
    expect(Object.keys(entry.types).sort()).to.deep.equal(['cds', 'eds', 'lds', 'rds']);
    for (const t of Object.values(entry.types)) expect(t.status).to.equal('SYNCED');

    const dump = await httpGet(daemon.httpPort, `/debug/config_dump?proxyID=${encodeURIComponent(entry.proxy)}`);
    expect(dump.status).to.equal(200);
    const configs = (JSON.parse(dump.body) as { configs: Array<Record<string, unknown>> }).configs;
    const listeners = configs.find((x) => x['@type'] === 'type.googleapis.com/envoy.admin.v3.ListenersConfigDump') as { dynamic_listeners: Array<{ name: string }> };
    expect(listeners.dynamic_listeners.map((l) => l.name)).to.deep.equal(['echo.foo.svc.cluster.local:7070']);
  });
});
