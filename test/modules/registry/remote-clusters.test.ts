import { expect } from 'chai';
import { Logging } from '../../../src/modules/logging';
import { PlatformRegistry, PlatformRegistryEvent, PlatformRegistrySnapshot, PlatformService, ServiceEndpoint } from '../../../src/modules/registry';
import { MulticlusterRegistry, OrchServiceRegistry } from '../../../src/modules/registry/orch';
import { OrchRegistryOptions } from '../../../src/modules/registry/orch/registry';
import { allowedInsecureOptions, insecureOptionsOf, remoteClustersOf, remoteKubeConfig } from '../../../src/modules/registry/orch/remote-secret';

const HOST = 'cart.shop.svc.cluster.local';

function platformService(source: string, ports: number[]): PlatformService {
  return {
    service: { hostname: HOST, namespace: 'shop', ports: ports.map((n) => ({ name: `http-${n}`, number: n, protocol: 'HTTP', targetPort: n })), resolution: 'STATIC', location: 'MESH_INTERNAL', addresses: [], exportTo: ['*'], source },
    targetPorts: new Map(ports.map((n) => [n, n])),
  };
}

function endpoint(address: string, cluster: string, port: number): ServiceEndpoint {
  return { hostname: HOST, servicePort: { name: `http-${port}`, number: port, protocol: 'HTTP', targetPort: port }, address, port, labels: { 'topology.mesh.io/cluster': cluster }, weight: 1, locality: '', serviceAccount: 'default', namespace: 'shop', network: '', workload: `Pod/shop/${address}` };
}

/** A registry whose snapshot the test sets, telling its listeners like a real one. */
class FakeRegistry implements PlatformRegistry {
  readonly name = 'Orch';
  current: PlatformRegistrySnapshot = { services: new Map(), endpoints: new Map() };
  private readonly listeners = new Set<(e: readonly PlatformRegistryEvent[]) => void>();
  snapshot(): PlatformRegistrySnapshot {
    return this.current;
  }
  onChange(listener: (e: readonly PlatformRegistryEvent[]) => void): () => void {
    this.listeners.add(listener);
    return () => void this.listeners.delete(listener);
  }
  set(ps: PlatformService | undefined, eps: Record<number, ServiceEndpoint[]> = {}): void {
    this.current = ps ? { services: new Map([[HOST, ps]]), endpoints: new Map([[HOST, new Map(Object.entries(eps).map(([k, v]) => [Number(k), v]))]]) } : { services: new Map(), endpoints: new Map() };
    for (const l of this.listeners) l([{ host: HOST, what: 'service', type: ps ? 'updated' : 'deleted' }]);
  }
}

describe('remote clusters: secrets and the merged registry', () => {
  const options = { clusterId: 'a' } as OrchRegistryOptions;

  it('merges a host of several clusters: the local definition, endpoints of all on its ports; removal is an endpoints event', () => {
    const local = new FakeRegistry();
    local.set(platformService('Service/shop/cart@a', [80]), { 80: [endpoint('10.1.0.1', 'a', 80)] });
    const view = new MulticlusterRegistry(local as unknown as OrchServiceRegistry, options, new Logging('pilot-discovery'));
    const events: PlatformRegistryEvent[][] = [];
    view.onChange((e) => events.push([...e]));
    const localEndpoints = view.snapshot().endpoints.get(HOST);
    expect(localEndpoints, 'one cluster: its endpoints object as is').to.equal(local.current.endpoints.get(HOST));

    const remote = new FakeRegistry();
    remote.set(platformService('Service/shop/cart@b', [80, 9090]), { 80: [endpoint('10.2.0.1', 'b', 80)], 9090: [endpoint('10.2.0.1', 'b', 9090)] });
    view.add('b', remote);
    expect(events.pop()).to.deep.equal([{ host: HOST, what: 'endpoints', type: 'updated' }]);
    const merged = view.snapshot();
    expect(merged.services.get(HOST)!.service.source).to.equal('Service/shop/cart@a');
    expect(merged.endpoints.get(HOST)!.get(80)!.map((e) => `${e.address} ${e.labels['topology.mesh.io/cluster']}`)).to.deep.equal(['10.1.0.1 a', '10.2.0.1 b']);
    expect(merged.endpoints.get(HOST)!.has(9090), 'a port the local service lacks').to.equal(false);
    expect(view.clusters()).to.deep.equal(['a', 'b']);

    view.remove('b');
    expect(events.pop()).to.deep.equal([{ host: HOST, what: 'endpoints', type: 'updated' }]);
    expect(view.snapshot().endpoints.get(HOST)!.get(80)!.map((e) => e.address)).to.deep.equal(['10.1.0.1']);

    // A host only the remote cluster has is added and deleted with it.
    local.set(undefined);
    view.add('b', remote);
    expect(events.pop()).to.deep.equal([{ host: HOST, what: 'service', type: 'added' }]);
    expect(view.snapshot().services.get(HOST)!.service.source).to.equal('Service/shop/cart@b');
    view.remove('b');
    expect(events.pop()).to.deep.equal([{ host: HOST, what: 'service', type: 'deleted' }]);
  });

  it('reads clusters from the data keys of a Secret, and refuses insecure auth options unless allowed', () => {
    const config = (user: string) => `apiVersion: v1
kind: Config
clusters: [{ name: c, cluster: { server: "https://10.0.0.1:6443" } }]
users: [{ name: u, user: ${user} }]
contexts: [{ name: c, context: { cluster: c, user: u } }]
current-context: c
`;
    const secret = { metadata: { name: 's', namespace: 'mesh-system' }, data: { b: Buffer.from(config('{ token: t }')).toString('base64'), a: Buffer.from('x').toString('base64') } };
    expect(remoteClustersOf(secret).map((e) => e.clusterId)).to.deep.equal(['a', 'b']);
    const none = allowedInsecureOptions('');
    expect(remoteKubeConfig(secret, remoteClustersOf(secret)[1], none).getCurrentCluster()!.server).to.equal('https://10.0.0.1:6443');
    expect(() => remoteKubeConfig(secret, remoteClustersOf(secret)[0], none)).to.throw(/Secret mesh-system\/s key "a": not an orchestrator config/);

    expect(insecureOptionsOf(config('{ exec: { command: sh } }'), none)).to.deep.equal(['exec (user u)']);
    expect(insecureOptionsOf(config('{ auth-provider: { name: cloud_b } }'), none)).to.deep.equal(['auth-provider cloud_b (user u)']);
    expect(insecureOptionsOf(config('{ client-key: /k, client-certificate: /c, tokenFile: /t }'), none)).to.deep.equal(['client-key file (user u)', 'client-certificate file (user u)', 'tokenFile (user u)']);
    expect(insecureOptionsOf(config('{ exec: { command: sh }, auth-provider: { name: cloud_b } }'), allowedInsecureOptions('exec, cloud_b'))).to.deep.equal([]);
    // Inline key data is not a file the daemon reads.
    expect(insecureOptionsOf(config('{ client-key-data: a2V5, client-certificate-data: Y2VydA== }'), none)).to.deep.equal([]);
  });

  it('gives hostile configs a clear error naming the Secret, never a crash', () => {
    const secret = (text: string) => ({ metadata: { name: 'h', namespace: 'mesh-system' }, data: { x: Buffer.from(text).toString('base64') } });
    const load = (text: string) => () => remoteKubeConfig(secret(text), remoteClustersOf(secret(text))[0], new Set());
    expect(load('a: &a [' + '*a,'.repeat(10) + ']\nb: [' + '*a,'.repeat(200) + ']')).to.throw(/Secret mesh-system\/h key "x"/);
    expect(load('x'.repeat(5 * 1024 * 1024))).to.throw(/Secret mesh-system\/h key "x": more than the \d+ bytes/);
    expect(load('[1, 2]')).to.throw(/not an orchestrator config/);
    expect(load('clusters: []\ncontexts: []\nusers: []\n')).to.throw(/no current cluster with a server address/);
    expect(insecureOptionsOf('users: 7', new Set())).to.deep.equal([]);
    expect(remoteClustersOf({ metadata: {}, data: { n: 5 as unknown as string } })).to.deep.equal([]);
  });
});
