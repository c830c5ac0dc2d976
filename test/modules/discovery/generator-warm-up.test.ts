import { expect } from 'chai';
import { GeneratorWarmUp } from '../../../src/modules/discovery/generator-warm-up';
import { TypeUrl, XdsTypeUrl } from '../../../src/modules/envoy/type-urls';
import { XdsGenerators } from '../../../src/modules/generators';
import { SidecarGenerator } from '../../../src/modules/generators/sidecar';
import { Logging } from '../../../src/modules/logging';
import { ClusterContributor } from '../../../src/modules/model/generator';
import { Proxy } from '../../../src/modules/model';
import { missCountingCache, proxyOf, pushOf, workloadServiceYaml } from '../../helpers/push';

describe('discovery: the generator warm-up before the daemon takes streams', () => {
  const yaml = ['a', 'b', 'c'].map((name, i) => `---${workloadServiceYaml({ namespace: 'shop', name, address: `10.1.0.${i + 1}`, ports: ['{ number: 80, name: http, protocol: HTTP }'] })}`).join('\n');
  const OUTBOUND = ['outbound|80||a.shop.svc.cluster.local', 'outbound|80||b.shop.svc.cluster.local', 'outbound|80||c.shop.svc.cluster.local'];

  /** A warm-up over a sidecar generator whose cluster contributor notes each cluster built. */
  function setUp() {
    const built: string[] = [];
    const counter: ClusterContributor = { patchCluster: (cluster) => void built.push(String(cluster.name)) };
    const sidecar = new SidecarGenerator({ clusters: [counter] });
    const warmUp = new GeneratorWarmUp({ byName: new Map([['', sidecar]]) } as XdsGenerators, new Logging('pilot-discovery'));
    return { built, sidecar, warmUp };
  }

  it('builds every outbound cluster before any proxy asks, so proxies of any namespace get them without building', () => {
    const { built, sidecar, warmUp } = setUp();
    const push = pushOf(yaml);
    expect(warmUp.warm(push).clusters.map((r) => r.name)).to.include.members(OUTBOUND);
    expect(built.filter((name) => name.startsWith('outbound|'))).to.have.members(OUTBOUND);
    built.length = 0;
    for (const proxy of [proxyOf('10.1.0.1', 'shop'), proxyOf('10.9.0.1', 'other')]) {
      const clusters = sidecar.generate({ proxy, push, typeUrl: TypeUrl.Cluster, names: undefined });
      expect(clusters.map((c) => c.name)).to.include.members(OUTBOUND);
    }
    expect(built.filter((name) => name.startsWith('outbound|')), 'outbound clusters built again').to.deep.equal([]);
  });

  it('builds every load assignment and every default virtual host other namespaces see, so their proxies build only their route tables', () => {
    const { sidecar, warmUp } = setUp();
    const { cache, misses } = missCountingCache(['cds', 'eds', 'rds']);
    const push = pushOf(yaml, '1', cache);
    const warmed = warmUp.warm(push);
    expect(warmed.loadAssignments.map((r) => r.name)).to.have.members(OUTBOUND);
    expect(warmed.routes.map((r) => r.name)).to.deep.equal(['80']);
    const missesOf = (proxy: Proxy, typeUrl: XdsTypeUrl) => {
      const before = misses();
      sidecar.generate({ proxy, push, typeUrl, names: undefined });
      return misses() - before;
    };
    const elsewhere = proxyOf('10.9.0.1', 'other');
    expect(missesOf(elsewhere, TypeUrl.ClusterLoadAssignment), 'EDS').to.equal(0);
    expect(missesOf(elsewhere, TypeUrl.RouteConfiguration), 'RDS: the route table of its namespace only').to.equal(1);
    // In the services' own namespace, their virtual hosts have short names: built there.
    expect(missesOf(proxyOf('10.1.0.1', 'shop'), TypeUrl.RouteConfiguration), 'RDS in shop').to.equal(1 + 3);
  });

  it('never fails the start: a push its generator cannot serve gives nothing', () => {
    const { warmUp } = setUp();
    const broken = Object.create(pushOf(yaml), { destinationRuleFor: { value: () => { throw new Error('boom'); } } });
    expect(warmUp.warm(broken)).to.deep.equal({ clusters: [], loadAssignments: [], routes: [] });
  });
});
