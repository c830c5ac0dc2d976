import { expect } from 'chai';
import { ConfigResource } from '../../../src/modules/config/resource';
import { ServiceEntrySpec } from '../../../src/modules/config/kinds/service-entry';
import { WorkloadEntrySpec } from '../../../src/modules/config/kinds/workload-entry';
import { diffRegistries } from '../../../src/modules/discovery/registry-diff';
import { buildRegistry, RegistryBuilder, ServiceRegistrySnapshot } from '../../../src/modules/registry';
import { EndpointNetworks } from '../../../src/modules/registry/build';

function resource<S extends object>(kind: string, namespace: string, name: string, spec: S, labels: Record<string, string> = {}): ConfigResource<S> {
  return { apiVersion: 'networking.mesh.io/v1', kind, metadata: { name, namespace, labels, annotations: {} }, spec };
}

function selectorEntry(namespace: string, name: string, app: string, hosts = [`${name}.${namespace}.svc.cluster.local`]): ConfigResource<ServiceEntrySpec> {
  return resource('ServiceEntry', namespace, name, {
    hosts,
    ports: [{ number: 80, name: 'http', protocol: 'HTTP' }],
    location: 'MESH_INTERNAL',
    resolution: 'STATIC',
    workloadSelector: { labels: { app } },
  } as ServiceEntrySpec);
}

function workload(namespace: string, name: string, app: string, address: string): ConfigResource<WorkloadEntrySpec> {
  return resource('WorkloadEntry', namespace, name, { address, labels: { app }, serviceAccount: app } as WorkloadEntrySpec);
}

/** What a fresh build gives for the same input: the builder must never differ from it. */
function expectSameAsFresh(built: ServiceRegistrySnapshot, entries: ConfigResource<ServiceEntrySpec>[], workloads: ConfigResource<WorkloadEntrySpec>[], networks?: EndpointNetworks): void {
  const fresh = buildRegistry(entries, workloads, undefined, { networks });
  expect([...built.services.keys()]).to.deep.equal([...fresh.services.keys()]);
  expect([...built.services]).to.deep.equal([...fresh.services]);
  expect([...built.endpoints].map(([h, m]) => [h, [...m]])).to.deep.equal([...fresh.endpoints].map(([h, m]) => [h, [...m]]));
}

describe('registry builder: a push rebuilds only what its change touched', () => {
  const namespaces = ['ns-a', 'ns-b'];
  let entries: ConfigResource<ServiceEntrySpec>[];
  let workloads: ConfigResource<WorkloadEntrySpec>[];

  beforeEach(() => {
    entries = namespaces.flatMap((ns) => [0, 1, 2].map((i) => selectorEntry(ns, `svc-${i}`, `app-${i}`)));
    workloads = namespaces.flatMap((ns) => [0, 1, 2].flatMap((i) => [1, 2].map((j) => workload(ns, `svc-${i}-${j}`, `app-${i}`, `10.${ns === 'ns-a' ? 1 : 2}.${i}.${j}`))));
  });

  it('gives what a fresh build gives, and keeps every object of an unchanged registry', () => {
    const builder = new RegistryBuilder();
    const first = builder.build(entries, workloads);
    expectSameAsFresh(first, entries, workloads);
    const second = builder.build([...entries], [...workloads]);
    for (const [host, service] of first.services) {
      expect(second.services.get(host)).to.equal(service);
      expect(second.endpoints.get(host)).to.equal(first.endpoints.get(host));
    }
    expect(diffRegistries(first, second)).to.deep.equal({ services: new Set(), endpoints: new Set(), workloadAddresses: new Set() });
  });

  it('a moved WorkloadEntry rebuilds its own service only; the diff names that host and the addresses that left and came', () => {
    const builder = new RegistryBuilder();
    const before = builder.build(entries, workloads);
    const index = workloads.findIndex((w) => w.metadata.name === 'svc-1-2' && w.metadata.namespace === 'ns-b');
    workloads[index] = workload('ns-b', 'svc-1-2', 'app-1', '10.9.9.9');
    const after = builder.build(entries, workloads);
    expectSameAsFresh(after, entries, workloads);
    const moved = 'svc-1.ns-b.svc.cluster.local';
    for (const host of before.services.keys()) {
      if (host === moved) continue;
      expect(after.services.get(host), host).to.equal(before.services.get(host));
      expect(after.endpoints.get(host), host).to.equal(before.endpoints.get(host));
    }
    expect(after.endpoints.get(moved)!.get(80)!.map((e) => e.address)).to.deep.equal(['10.2.1.1', '10.9.9.9']);
    // 10.2.1.1's own endpoint did not change: its proxy's inbound config stays as it is.
    expect(diffRegistries(before, after)).to.deep.equal({ services: new Set(), endpoints: new Set([moved]), workloadAddresses: new Set(['10.2.1.2', '10.9.9.9']) });
  });

  it('names the address of a WorkloadEntry whose labels changed in place, and no other address of its service', () => {
    const builder = new RegistryBuilder();
    const before = builder.build(entries, workloads);
    const index = workloads.findIndex((w) => w.metadata.name === 'svc-1-2' && w.metadata.namespace === 'ns-b');
    const relabelled = workload('ns-b', 'svc-1-2', 'app-1', workloads[index].spec.address!);
    relabelled.spec.labels = { ...relabelled.spec.labels, version: 'v2' };
    workloads[index] = relabelled;
    const after = builder.build(entries, workloads);
    expect(diffRegistries(before, after)).to.deep.equal({
      services: new Set(),
      endpoints: new Set(['svc-1.ns-b.svc.cluster.local']),
      workloadAddresses: new Set([relabelled.spec.address]),
    });
  });

  it('follows WorkloadEntries that join, leave or change labels, and ServiceEntries that change or go', () => {
    const builder = new RegistryBuilder();
    builder.build(entries, workloads);
    const steps: Array<[string, () => void]> = [
      ['a WorkloadEntry joins svc-0 in ns-a', () => workloads.push(workload('ns-a', 'svc-0-3', 'app-0', '10.1.0.3'))],
      ['a WorkloadEntry changes its label to svc-2', () => (workloads[0] = workload('ns-a', 'svc-0-1', 'app-2', '10.1.0.1'))],
      ['a WorkloadEntry leaves', () => workloads.splice(1, 1)],
      ['every WorkloadEntry of ns-b goes', () => (workloads = workloads.filter((w) => w.metadata.namespace !== 'ns-b'))],
      ['they come back', () => workloads.push(workload('ns-b', 'svc-0-1', 'app-0', '10.2.0.1'))],
      ['a ServiceEntry gains a port', () => (entries[0] = { ...entries[0], spec: { ...entries[0].spec, ports: [...entries[0].spec.ports!, { number: 81, name: 'http-81', protocol: 'HTTP' }] } })],
      ['a ServiceEntry selects another app', () => (entries[1] = selectorEntry('ns-a', 'svc-1', 'app-2'))],
      ['a ServiceEntry goes', () => entries.splice(2, 1)],
      ['a ServiceEntry with inline endpoints comes', () => entries.push(resource('ServiceEntry', 'ns-c', 'ext', { hosts: ['ext.example.com'], ports: [{ number: 443, name: 'tls', protocol: 'TLS' }], resolution: 'STATIC', endpoints: [{ address: '192.0.2.1' }] } as ServiceEntrySpec))],
    ];
    for (const [what, change] of steps) {
      change();
      const built = builder.build(entries, workloads);
      try {
        expectSameAsFresh(built, entries, workloads);
      } catch (err) {
        throw new Error(`after "${what}": ${(err as Error).message}`);
      }
    }
  });

  it('reports a host declared twice on every build, the first ServiceEntry in namespace/name order keeping it', () => {
    const builder = new RegistryBuilder();
    const shared = ['shared.example.com'];
    const later = selectorEntry('ns-b', 'zz', 'app-0', shared);
    const earlier = selectorEntry('ns-a', 'aa', 'app-1', shared);
    const conflicts: string[] = [];
    for (let i = 0; i < 2; i++) {
      const built = builder.build([later, earlier], workloads, (host, kept, ignored) => conflicts.push(`${host} ${kept} ${ignored}`));
      expect(built.services.get('shared.example.com')!.source).to.equal('ServiceEntry/ns-a/aa');
    }
    expect(conflicts).to.deep.equal(Array(2).fill('shared.example.com ServiceEntry/ns-a/aa ServiceEntry/ns-b/zz'));
  });

  it('makes every endpoint again when the networks change', () => {
    const builder = new RegistryBuilder();
    const west: EndpointNetworks = { networkOf: () => 'west' };
    const east: EndpointNetworks = { networkOf: () => 'east' };
    builder.build(entries, workloads, undefined, { networks: west });
    const built = builder.build(entries, workloads, undefined, { networks: east });
    expectSameAsFresh(built, entries, workloads, east);
    expect(new Set([...built.endpoints.values()].flatMap((m) => [...m.values()].flat().map((e) => e.network)))).to.deep.equal(new Set(['east']));
  });
});
