/**
 * The mesh config layers on the orchestrator: the `mesh` ConfigMap of the system namespace
 * (written with the real kubectl against the in-process API server) wins over the
 * `--meshConfig` file, follows every update, keeps its last good version when an update does
 * not parse, and gives way to the file when deleted. Its `meshNetworks` key, like
 * `--networksConfig`, decides the network of endpoints that name none, which the name table a
 * proxy gets follows.
 */
import { expect } from 'chai';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { resourcesOf, sidecarNode, SotwClient } from '../../helpers/ads-client';
import { RunningDaemon } from '../../helpers/daemon';
import { kubectl, OrchWorld, startOrchDaemon, startOrchWorld } from '../../helpers/orch-mesh';
import { principalNames } from '../../helpers/rbac';

const LDS = 'type.googleapis.com/envoy.config.listener.v3.Listener';
const NDS = 'type.googleapis.com/mesh.networking.nds.v1.NameTable';

const WORKLOADS = `
apiVersion: networking.mesh.io/v1
kind: ServiceEntry
metadata: { name: httpbin, namespace: foo }
spec:
  hosts: [httpbin.foo.svc.cluster.local]
  location: MESH_INTERNAL
  resolution: STATIC
  ports: [{ number: 8000, name: http, protocol: HTTP, targetPort: 8080 }]
  workloadSelector: { labels: { app: httpbin } }
---
apiVersion: networking.mesh.io/v1
kind: WorkloadEntry
metadata: { name: httpbin-a, namespace: foo }
spec: { address: 10.1.0.10, labels: { app: httpbin } }
---
apiVersion: networking.mesh.io/v1
kind: WorkloadEntry
metadata: { name: httpbin-b, namespace: foo }
spec: { address: 10.2.0.10, labels: { app: httpbin } }
---
apiVersion: networking.mesh.io/v1
kind: WorkloadEntry
metadata: { name: httpbin-c, namespace: foo }
spec: { address: 10.3.0.10, labels: { app: httpbin }, network: net-c }
---
apiVersion: security.mesh.io/v1
kind: AuthorizationPolicy
metadata: { name: allow-bar, namespace: foo }
spec:
  selector: { matchLabels: { app: httpbin } }
  rules: [{ from: [{ source: { principals: ["cluster.local/ns/foo/sa/bar"] } }] }]
`;

function configMap(data: Record<string, string>): string {
  return `${JSON.stringify({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'mesh', namespace: 'mesh-system' }, data })}\n`;
}

describe('the mesh ConfigMap and mesh networks on the orchestrator (end to end)', function () {
  this.timeout(60_000);
  let world: OrchWorld;
  let daemon: RunningDaemon;
  let xds: SotwClient;

  before(async () => {
    world = await startOrchWorld({ simulateCluster: false, namespaces: ['mesh-system', 'foo'] });
    await world.apply(WORKLOADS);
    await world.apply(configMap({ mesh: 'trustDomain: cm.example\ntrustDomainAliases: [cluster.local]\n' }));
    fs.writeFileSync(path.join(world.dir, 'mesh.yaml'), 'trustDomain: file.example\n');
    fs.writeFileSync(path.join(world.dir, 'networks.yaml'), 'networks:\n  net-a: { endpoints: [{ fromCidr: 10.1.0.0/16 }] }\n  net-b: { endpoints: [{ fromCidr: 10.2.0.0/16 }] }\n');
    daemon = await startOrchDaemon(world, ['--meshConfig', path.join(world.dir, 'mesh.yaml'), '--networksConfig', path.join(world.dir, 'networks.yaml')]);
    xds = new SotwClient(daemon.grpcPort, sidecarNode('10.1.0.10', 'foo', { LABELS: JSON.stringify({ app: 'httpbin' }), NETWORK: 'net-a', DNS_CAPTURE: 'true' }));
  });
  after(async () => {
    xds?.close();
    await daemon?.stop();
    await world?.close();
  });

  async function nextListener(): Promise<unknown> {
    const response = await xds.next(LDS, 10_000);
    xds.ack(response);
    return resourcesOf(response).find((l) => l.name === '10.1.0.10_8000');
  }

  /**
   * Reads pushes of `read` until one equals `expected` (a full push may first resend what did
   * not change); resolves with the last one read, for the assertion.
   */
  async function until<T>(read: () => Promise<T>, expected: T, ms = 10_000): Promise<T> {
    const deadline = Date.now() + ms;
    let last = await read();
    while (JSON.stringify(last) !== JSON.stringify(expected) && Date.now() < deadline) last = await read();
    return last;
  }
  const principalsBecome = (expected: string[]) => until(async () => principalNames(await nextListener()), expected);
  const nameTableBecomes = (expected: string[]) => until(nextNameTable, expected);

  async function nextNameTable(): Promise<string[]> {
    const response = await xds.next(NDS, 10_000);
    // The name table is one resource, named '' (the agent asks for it by that name).
    xds.ack(response, ['']);
    const table = resourcesOf(response)[0]?.table ?? {};
    return [...(table['httpbin.foo.svc.cluster.local']?.ips ?? [])].sort();
  }

  it('the ConfigMap wins over the file from the first push', async () => {
    xds.send({ type_url: LDS });
    expect(principalNames(await nextListener())).to.deep.equal(['spiffe://cm.example/ns/foo/sa/bar', 'spiffe://cluster.local/ns/foo/sa/bar']);
    expect(daemon.output()).to.match(/mesh config: trust domain cm\.example, root namespace mesh-system/);
  });

  it('endpoints are on the network the networks file says (fromCidr), or their own; a proxy of net-a resolves only net-a ones', async () => {
    xds.send({ type_url: NDS, resource_names: [''] });
    // 10.1.0.10 is in net-a, 10.2.0.10 in net-b (fromCidr), 10.3.0.10 on its own net-c.
    expect(await nextNameTable()).to.deep.equal(['10.1.0.10']);
  });

  it('a ConfigMap update changes the config at once; an update that does not parse is refused and the last good one stays', async () => {
    await world.apply(configMap({ mesh: 'trustDomain: cm2.example\n' }));
    expect(await principalsBecome(['spiffe://cm2.example/ns/foo/sa/bar'])).to.deep.equal(['spiffe://cm2.example/ns/foo/sa/bar']);

    const since = daemon.output().length;
    await world.apply(configMap({ mesh: 'trustDomain: 42\n' }));
    await daemon.waitForLog(/mesh config rejected, the last good version stays in force: ConfigMap mesh-system\/mesh key mesh: trustDomain: must be a string/, 10_000, since);
    expect(await xds.nothingFor(500, LDS)).to.equal(undefined);
  });

  it('the meshNetworks key replaces the networks file: the name table follows', async () => {
    const networks = (a: string, b: string) => `networks:\n  net-a: { endpoints: [{ fromCidr: ${a} }] }\n  net-b: { endpoints: [{ fromCidr: ${b} }] }\n`;
    await world.apply(configMap({ mesh: 'trustDomain: cm2.example\n', meshNetworks: networks('10.2.0.0/16', '10.1.0.0/16') }));
    expect(await nameTableBecomes(['10.2.0.10'])).to.deep.equal(['10.2.0.10']);

    await world.apply(configMap({ mesh: 'trustDomain: cm2.example\n', meshNetworks: networks('10.9.0.0/16', '10.0.0.0/8') }));
    expect(await nameTableBecomes([])).to.deep.equal([]);
  });

  it('deleting the ConfigMap leaves the file and the defaults', async () => {
    const deleted = await kubectl(world.kubeconfig, ['delete', 'configmap', 'mesh', '-n', 'mesh-system']);
    expect(deleted.code, deleted.stderr).to.equal(0);
    expect(await principalsBecome(['spiffe://file.example/ns/foo/sa/bar'])).to.deep.equal(['spiffe://file.example/ns/foo/sa/bar']);
    expect(await nameTableBecomes(['10.1.0.10'])).to.deep.equal(['10.1.0.10']);
  });
});
