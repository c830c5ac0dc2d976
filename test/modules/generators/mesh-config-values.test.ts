/**
 * What the generators take from the push's mesh config: the outbound traffic policy (a
 * Sidecar's own wins), the clusters' connect timeout and DNS refresh rate, and the mesh
 * networks' endpoint assignment the registry makes.
 */
import { expect } from 'chai';
import { TypeUrl } from '../../../src/modules/envoy/type-urls';
import { SidecarGenerator } from '../../../src/modules/generators/sidecar';
import { NetworkAssignment, parseMeshConfig, parseMeshNetworks } from '../../../src/modules/mesh-config';
import { PushContext } from '../../../src/modules/model';
import { buildRegistry, NETWORK_LABEL } from '../../../src/modules/registry/build';
import { decodedOf } from '../../helpers/envoy';
import { proxyOf, pushOf, serviceEntryYaml } from '../../helpers/push';
import { ConfigResource } from '../../../src/modules/config/resource';
import { ServiceEntrySpec } from '../../../src/modules/config/kinds/service-entry';
import { WorkloadEntrySpec } from '../../../src/modules/config/kinds/workload-entry';

const CONFIG =
  serviceEntryYaml('foo', 'dns', 'dns.example.com', 'DNS', '{ number: 443, name: tls, protocol: TLS }') +
  serviceEntryYaml('foo', 'web', 'web.example.com', 'DNS', '{ number: 80, name: http, protocol: HTTP }');
const PROXY = proxyOf('10.1.1.1', 'foo', {});

function pushWithMesh(yaml: string, mesh: string): PushContext {
  const base = pushOf(yaml);
  return new PushContext(base.version, base.config, base.registry, { ...base.options, mesh: parseMeshConfig(mesh, 'mesh.yaml') });
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Any = any;
const listeners = (push: PushContext): Record<string, Any> => decodedOf(new SidecarGenerator({}), TypeUrl.Listener, push, PROXY, ['virtualOutbound']);
const routes = (push: PushContext): Record<string, Any> => decodedOf(new SidecarGenerator({}), TypeUrl.RouteConfiguration, push, PROXY, ['80']);
const clusters = (push: PushContext): Record<string, Any> => decodedOf(new SidecarGenerator({}), TypeUrl.Cluster, push, PROXY);

describe('generators honour the push mesh config', () => {
  it('outboundTrafficPolicy REGISTRY_ONLY: unknown destinations go to BlackHoleCluster and the HTTP catch-all answers 502; ALLOW_ANY passes them through', () => {
    const catchAll = (push: PushContext) => routes(push)['80'].virtual_hosts.map((v: Any) => v.name).filter((n: string) => !n.includes('.'));
    const allowAny = pushWithMesh(CONFIG, '');
    expect(listeners(allowAny).virtualOutbound.default_filter_chain.filters[0].typed_config.cluster).to.equal('PassthroughCluster');
    expect(catchAll(allowAny)).to.deep.equal(['allow_any']);
    const registryOnly = pushWithMesh(CONFIG, 'outboundTrafficPolicy: { mode: REGISTRY_ONLY }');
    expect(listeners(registryOnly).virtualOutbound.default_filter_chain.filters[0].typed_config.cluster).to.equal('BlackHoleCluster');
    expect(catchAll(registryOnly)).to.deep.equal(['block_all']);
  });

  it("a Sidecar's outboundTrafficPolicy wins over the mesh config's", () => {
    const sidecar = `${CONFIG}
---
apiVersion: networking.mesh.io/v1
kind: Sidecar
metadata: { name: default, namespace: foo }
spec:
  egress: [{ hosts: ["*/*"] }]
  outboundTrafficPolicy: { mode: ALLOW_ANY }
`;
    const push = pushWithMesh(sidecar, 'outboundTrafficPolicy: { mode: REGISTRY_ONLY }');
    expect(listeners(push).virtualOutbound.default_filter_chain.filters[0].typed_config.cluster).to.equal('PassthroughCluster');
  });

  it('connectTimeout and dnsRefreshRate set every cluster the mesh config covers', () => {
    const push = pushWithMesh(CONFIG, 'connectTimeout: 2.5s\ndnsRefreshRate: 15s');
    const all = clusters(push);
    expect(all['outbound|443||dns.example.com'].connect_timeout).to.deep.equal({ seconds: '2', nanos: 500_000_000 });
    expect(all['outbound|443||dns.example.com'].dns_refresh_rate).to.deep.equal({ seconds: '15' });
    expect(all.PassthroughCluster.connect_timeout).to.deep.equal({ seconds: '2', nanos: 500_000_000 });
    expect(clusters(pushWithMesh(CONFIG, '')).BlackHoleCluster.connect_timeout).to.deep.equal({ seconds: '10' });
  });
});

describe('mesh networks: the network of endpoints that name none', () => {
  const { values } = parseMeshNetworks(
    `
networks:
  net-a: { endpoints: [{ fromCidr: 10.1.0.0/16 }, { fromCidr: "fd00::/8" }], gateways: [{ address: 192.0.2.1, port: 15443 }] }
  net-b: { endpoints: [{ fromRegistry: cluster-b }], gateways: [{ registryServiceName: gw.mesh-system.svc.cluster.local, port: 15443, locality: us-east }] }
  net-c: { endpoints: [{ fromRegistry: Orch }] }
`,
    'networks.yaml',
  );

  it('takes a CIDR that holds the address first, then the registry the endpoint comes from', () => {
    const assignment = new NetworkAssignment(values);
    expect(assignment.networkOf('10.1.2.3', 'Orch')).to.equal('net-a');
    expect(assignment.networkOf('fd00::1', 'Orch')).to.equal('net-a');
    expect(assignment.networkOf('10.2.2.3', 'Orch')).to.equal('net-c');
    expect(assignment.networkOf('10.2.2.3', 'cluster-b')).to.equal('net-b');
    expect(assignment.networkOf('10.2.2.3', 'elsewhere')).to.equal('');
    expect(new NetworkAssignment({ networks: {} }).empty).to.equal(true);
  });

  it('the registry build gives WorkloadEntry and ServiceEntry endpoints a network: their own, else their label, else the mesh networks', () => {
    const se: ConfigResource<ServiceEntrySpec> = {
      apiVersion: 'networking.mesh.io/v1',
      kind: 'ServiceEntry',
      metadata: { name: 'svc', namespace: 'foo', labels: {}, annotations: {} },
      spec: {
        hosts: ['svc.foo.svc.cluster.local'],
        ports: [{ number: 80, name: 'http', protocol: 'HTTP' }],
        resolution: 'STATIC',
        endpoints: [{ address: '10.1.0.1' }, { address: '10.9.0.1' }, { address: '10.1.0.2', network: 'own' }, { address: '10.1.0.3', labels: { [NETWORK_LABEL]: 'labelled' } }],
      } as ServiceEntrySpec,
    };
    const registry = buildRegistry([se], [] as ConfigResource<WorkloadEntrySpec>[], undefined, { clusterId: 'Orch', networks: new NetworkAssignment(values) });
    const networks = registry.endpoints.get('svc.foo.svc.cluster.local')!.get(80)!.map((e) => `${e.address}=${e.network}`);
    expect(networks).to.deep.equal(['10.1.0.1=net-a', '10.1.0.2=own', '10.1.0.3=labelled', '10.9.0.1=net-c']);
    const withoutNetworks = buildRegistry([se], []);
    expect(withoutNetworks.endpoints.get('svc.foo.svc.cluster.local')!.get(80)!.map((e) => e.network)).to.deep.equal(['', 'own', 'labelled', '']);
  });

  it('refuses networks it cannot use, naming the field', () => {
    const fail = (text: string) => {
      try {
        parseMeshNetworks(text, 'networks.yaml');
      } catch (err) {
        return (err as Error).message;
      }
      return 'parsed';
    };
    expect(fail('networks: { a: { endpoints: [{ fromCidr: 10.0.0.0/33 }] } }')).to.equal('networks.yaml: networks.a.endpoints[0].fromCidr: "10.0.0.0/33" is not a CIDR range such as 10.0.0.0/16');
    expect(fail('networks: { a: { endpoints: [{ fromCidr: 10.0.0.0/8, fromRegistry: x }] } }')).to.equal('networks.yaml: networks.a.endpoints[0]: sets fromCidr and fromRegistry: exactly one may be set');
    expect(fail('networks: { a: { endpoints: [] } }')).to.equal('networks.yaml: networks.a.endpoints: must list at least one endpoint (fromCidr or fromRegistry)');
    expect(fail('networks: { a: { endpoints: [{ fromRegistry: x }], gateways: [{ address: 1.2.3.4 }] } }')).to.equal('networks.yaml: networks.a.gateways[0].port: is required');
    expect(fail('networks: { a: { endpoints: [{ fromRegistry: x }], gateways: [{ port: 1 }] } }')).to.equal('networks.yaml: networks.a.gateways[0]: needs address or registryServiceName');
    expect(parseMeshNetworks('', 'networks.yaml').values).to.deep.equal({ networks: {} });
  });
});
