import { expect } from 'chai';
import { KINDS, KindRegistry, parseConfigText } from '../../src/modules/config';
import { ServiceEntrySpec } from '../../src/modules/config/kinds/service-entry';
import { WorkloadEntrySpec } from '../../src/modules/config/kinds/workload-entry';
import { ConfigResource } from '../../src/modules/config/resource';
import { FilterChainContext, HttpFilterContributor, NetworkFilterContributor } from '../../src/modules/generators/api';
import { SidecarGenerator } from '../../src/modules/generators/sidecar';
import { parseProxy, Proxy, PushContext } from '../../src/modules/model';
import { buildRegistry } from '../../src/modules/registry/build';
import { decodeMessage } from '../../src/modules/xds/protos';
import { TypeUrl } from '../../src/modules/xds/type-urls';

// ---- helpers (each sidecar test file carries its own copy) ----
function pushOf(yaml: string): PushContext {
  const parsed = parseConfigText('test.yaml', yaml, new KindRegistry(KINDS));
  expect(parsed.issues.map((i) => `${i.kind}/${i.name} ${i.field}: ${i.message}`)).to.deep.equal([]);
  const config = new Map<string, ConfigResource[]>();
  for (const { resource } of parsed.resources) config.set(resource.kind, [...(config.get(resource.kind) ?? []), resource]);
  const of = <S extends object>(kind: string) => (config.get(kind) ?? []) as ConfigResource<S>[];
  const registry = buildRegistry(of<ServiceEntrySpec>('ServiceEntry'), of<WorkloadEntrySpec>('WorkloadEntry'));
  return new PushContext('1', config, registry, { domain: 'cluster.local', rootNamespace: 'mesh-system' });
}

function proxyOf(ip: string, namespace: string, labels: Record<string, string>, mode = 'REDIRECT'): Proxy {
  return parseProxy(`sidecar~${ip}~pod.${namespace}~${namespace}.svc.cluster.local`, { NAMESPACE: namespace, LABELS: labels, INTERCEPTION_MODE: mode });
}

function listenersOf(gen: SidecarGenerator, push: PushContext, proxy: Proxy, names?: string[]): Record<string, Record<string, unknown>> {
  const out: Record<string, Record<string, unknown>> = {};
  for (const r of gen.generate({ proxy, push, typeUrl: TypeUrl.Listener, names })) out[r.name] = decodeMessage(TypeUrl.Listener, r.body);
  return out;
}

const HCM = 'type.googleapis.com/envoy.extensions.filters.network.http_connection_manager.v3.HttpConnectionManager';
const TCP_PROXY = 'type.googleapis.com/envoy.extensions.filters.network.tcp_proxy.v3.TcpProxy';
const router = { name: 'envoy.filters.http.router', typed_config: { '@type': 'type.googleapis.com/envoy.extensions.filters.http.router.v3.Router' } };
const fault = { name: 'envoy.filters.http.fault', typed_config: { '@type': 'type.googleapis.com/envoy.extensions.filters.http.fault.v3.HTTPFault' } };
const cors = { name: 'envoy.filters.http.cors', typed_config: { '@type': 'type.googleapis.com/envoy.extensions.filters.http.cors.v3.Cors' }, is_optional: true };
const tcpProxy = (cluster: string) => ({ name: 'envoy.filters.network.tcp_proxy', typed_config: { '@type': TCP_PROXY, stat_prefix: cluster, cluster } });
const outboundHcm = (statPrefix: string, route: string, filters: unknown[] = []) => ({
  name: 'envoy.filters.network.http_connection_manager',
  typed_config: {
    '@type': HCM,
    stat_prefix: statPrefix,
    rds: { config_source: { ads: {}, resource_api_version: 'V3' }, route_config_name: route },
    http_filters: [...filters, cors, fault, router],
    upgrade_configs: [{ upgrade_type: 'websocket' }],
  },
});
const inboundHcm = (statPrefix: string, port: number, filters: unknown[] = []) => ({
  name: 'envoy.filters.network.http_connection_manager',
  typed_config: {
    '@type': HCM,
    stat_prefix: statPrefix,
    route_config: {
      name: `inbound|${port}||`,
      validate_clusters: { value: false },
      virtual_hosts: [
        {
          name: `inbound|http|${port}`,
          domains: ['*'],
          routes: [{ name: 'default', match: { prefix: '/' }, route: { cluster: `inbound|${port}||`, timeout: { seconds: '0' } } }],
        },
      ],
    },
    http_filters: [...filters, router],
    upgrade_configs: [{ upgrade_type: 'websocket' }],
  },
});
// ---------------------------------------------------------------

const CONFIG = `
apiVersion: networking.mesh.io/v1
kind: ServiceEntry
metadata: { name: httpbin, namespace: foo }
spec:
  hosts: [httpbin.foo.svc.cluster.local]
  location: MESH_INTERNAL
  resolution: STATIC
  ports:
  - { number: 8000, name: http, protocol: HTTP, targetPort: 8080 }
  - { number: 9000, name: tcp, protocol: TCP, targetPort: 9001 }
  workloadSelector: { labels: { app: httpbin } }
---
apiVersion: networking.mesh.io/v1
kind: WorkloadEntry
metadata: { name: httpbin-v1, namespace: foo }
spec: { address: 127.0.0.10, labels: { app: httpbin, version: v1 } }
---
apiVersion: networking.mesh.io/v1
kind: ServiceEntry
metadata: { name: db, namespace: foo }
spec:
  hosts: [db.foo.svc.cluster.local, a-db.foo.svc.cluster.local]
  resolution: STATIC
  ports: [{ number: 9000, name: tcp, protocol: TCP }]
---
apiVersion: networking.mesh.io/v1
kind: ServiceEntry
metadata: { name: vip, namespace: foo }
spec:
  hosts: [vip.foo.svc.cluster.local]
  addresses: [10.96.0.7, 10.97.0.0/16]
  resolution: STATIC
  ports: [{ number: 9000, name: tcp, protocol: TCP }]
`;

describe('sidecar generator: LDS', () => {
  describe('without traffic capture (interceptionMode NONE)', () => {
    const httpbin = proxyOf('127.0.0.10', 'foo', { app: 'httpbin', version: 'v1' }, 'NONE');

    it('binds INSTANCE_IP:<service port> inbound, forwarding to the inbound cluster (127.0.0.1:<workload port>)', () => {
      const listeners = listenersOf(new SidecarGenerator({}), pushOf(CONFIG), httpbin);
      expect(listeners['127.0.0.10_8000']).to.deep.equal({
        name: '127.0.0.10_8000',
        address: { socket_address: { address: '127.0.0.10', port_value: 8000 } },
        traffic_direction: 'INBOUND',
        filter_chains: [{ filters: [inboundHcm('inbound_127.0.0.10_8000', 8000)] }],
      });
      expect(listeners['127.0.0.10_9000']).to.deep.equal({
        name: '127.0.0.10_9000',
        address: { socket_address: { address: '127.0.0.10', port_value: 9000 } },
        traffic_direction: 'INBOUND',
        filter_chains: [{ filters: [tcpProxy('inbound|9000||')] }],
      });
    });

    it('binds 127.0.0.1:<service port> outbound: RDS for HTTP ports, tcp_proxy for TCP ports (first host wins)', () => {
      const listeners = listenersOf(new SidecarGenerator({}), pushOf(CONFIG), httpbin);
      expect(listeners['127.0.0.1_8000']).to.deep.equal({
        name: '127.0.0.1_8000',
        address: { socket_address: { address: '127.0.0.1', port_value: 8000 } },
        traffic_direction: 'OUTBOUND',
        filter_chains: [{ filters: [outboundHcm('outbound_127.0.0.1_8000', '8000')] }],
      });
      expect(listeners['127.0.0.1_9000']).to.deep.equal({
        name: '127.0.0.1_9000',
        address: { socket_address: { address: '127.0.0.1', port_value: 9000 } },
        traffic_direction: 'OUTBOUND',
        filter_chains: [{ filters: [tcpProxy('outbound|9000||a-db.foo.svc.cluster.local')] }],
      });
      expect(Object.keys(listeners).sort()).to.deep.equal(['127.0.0.10_8000', '127.0.0.10_9000', '127.0.0.1_8000', '127.0.0.1_9000']);
    });

    it('binds where a Sidecar egress listener says, with the route table named <bind>:<port>', () => {
      const push = pushOf(`${CONFIG}
---
apiVersion: networking.mesh.io/v1
kind: Sidecar
metadata: { name: default, namespace: foo }
spec:
  egress:
  - port: { number: 8000, protocol: HTTP, name: http }
    bind: 127.0.0.2
    hosts: ["./httpbin.foo.svc.cluster.local"]
`);
      const listeners = listenersOf(new SidecarGenerator({}), push, httpbin);
      expect(Object.keys(listeners).sort()).to.deep.equal(['127.0.0.10_8000', '127.0.0.10_9000', '127.0.0.2_8000']);
      expect(listeners['127.0.0.2_8000']).to.deep.equal({
        name: '127.0.0.2_8000',
        address: { socket_address: { address: '127.0.0.2', port_value: 8000 } },
        traffic_direction: 'OUTBOUND',
        filter_chains: [{ filters: [outboundHcm('outbound_127.0.0.2_8000', '127.0.0.2:8000')] }],
      });
    });
  });

  describe('with traffic capture', () => {
    it('REDIRECT: virtualOutbound on 15001, unbound per-port listeners, virtualInbound on 15006', () => {
      const proxy = proxyOf('127.0.0.10', 'foo', { app: 'httpbin', version: 'v1' }, 'REDIRECT');
      const listeners = listenersOf(new SidecarGenerator({}), pushOf(CONFIG), proxy);
      expect(Object.keys(listeners)).to.deep.equal(['virtualOutbound', '0.0.0.0_8000', '0.0.0.0_9000', 'virtualInbound']);
      expect(listeners.virtualOutbound).to.deep.equal({
        name: 'virtualOutbound',
        address: { socket_address: { address: '0.0.0.0', port_value: 15001 } },
        use_original_dst: { value: true },
        traffic_direction: 'OUTBOUND',
        filter_chains: [{ name: 'virtualOutbound-blackhole', filter_chain_match: { destination_port: { value: 15001 } }, filters: [tcpProxy('BlackHoleCluster')] }],
        default_filter_chain: { name: 'virtualOutbound-catchall-tcp', filters: [tcpProxy('PassthroughCluster')] },
      });
      expect(listeners['0.0.0.0_8000']).to.deep.equal({
        name: '0.0.0.0_8000',
        address: { socket_address: { address: '0.0.0.0', port_value: 8000 } },
        bind_to_port: { value: false },
        traffic_direction: 'OUTBOUND',
        filter_chains: [{ filters: [outboundHcm('outbound_0.0.0.0_8000', '8000')] }],
      });
      // A TCP service with addresses gets a chain for them; the first other TCP service takes the rest.
      expect(listeners['0.0.0.0_9000']).to.deep.equal({
        name: '0.0.0.0_9000',
        address: { socket_address: { address: '0.0.0.0', port_value: 9000 } },
        bind_to_port: { value: false },
        traffic_direction: 'OUTBOUND',
        filter_chains: [
          {
            filter_chain_match: {
              prefix_ranges: [
                { address_prefix: '10.96.0.7', prefix_len: { value: 32 } },
                { address_prefix: '10.97.0.0', prefix_len: { value: 16 } },
              ],
            },
            filters: [tcpProxy('outbound|9000||vip.foo.svc.cluster.local')],
          },
          { filters: [tcpProxy('outbound|9000||a-db.foo.svc.cluster.local')] },
        ],
      });
      // Captured connections arrive for the workload port (8080, 9001), not the service port.
      expect(listeners.virtualInbound).to.deep.equal({
        name: 'virtualInbound',
        address: { socket_address: { address: '0.0.0.0', port_value: 15006 } },
        traffic_direction: 'INBOUND',
        listener_filters: [
          { name: 'envoy.filters.listener.original_dst', typed_config: { '@type': 'type.googleapis.com/envoy.extensions.filters.listener.original_dst.v3.OriginalDst' } },
        ],
        filter_chains: [
          { name: 'inbound|8000||', filter_chain_match: { destination_port: { value: 8080 } }, filters: [inboundHcm('inbound_0.0.0.0_8080', 8000)] },
          { name: 'inbound|9000||', filter_chain_match: { destination_port: { value: 9001 } }, filters: [tcpProxy('inbound|9000||')] },
          { name: 'virtualInbound-passthrough', filters: [tcpProxy('InboundPassthroughCluster')] },
        ],
      });
    });

    it('TPROXY: virtualInbound is transparent', () => {
      const proxy = proxyOf('127.0.0.10', 'foo', { app: 'httpbin' }, 'TPROXY');
      const listeners = listenersOf(new SidecarGenerator({}), pushOf(CONFIG), proxy, ['virtualInbound']);
      expect(Object.keys(listeners)).to.deep.equal(['virtualInbound']);
      expect(listeners.virtualInbound.transparent).to.deep.equal({ value: true });
    });

    it('REGISTRY_ONLY sends unknown destinations to BlackHoleCluster', () => {
      const push = pushOf(`${CONFIG}
---
apiVersion: networking.mesh.io/v1
kind: Sidecar
metadata: { name: default, namespace: foo }
spec:
  egress: [{ hosts: ["*/*"] }]
  outboundTrafficPolicy: { mode: REGISTRY_ONLY }
`);
      const listeners = listenersOf(new SidecarGenerator({}), push, proxyOf('10.1.1.1', 'foo', {}), ['virtualOutbound']);
      expect(listeners.virtualOutbound.default_filter_chain).to.deep.equal({ name: 'virtualOutbound-catchall-tcp', filters: [tcpProxy('BlackHoleCluster')] });
    });
  });

  it('gives an address to the first TCP service claiming it, so filter chains never overlap', () => {
    const push = pushOf(`${CONFIG}
---
apiVersion: networking.mesh.io/v1
kind: ServiceEntry
metadata: { name: vip2, namespace: foo }
spec:
  hosts: [vip2.foo.svc.cluster.local]
  addresses: [10.96.0.7, 10.98.0.1]
  resolution: STATIC
  ports: [{ number: 9000, name: tcp, protocol: TCP }]
`);
    const listeners = listenersOf(new SidecarGenerator({}), push, proxyOf('10.1.1.1', 'foo', {}), ['0.0.0.0_9000']);
    const chains = listeners['0.0.0.0_9000'].filter_chains as Record<string, unknown>[];
    expect(chains.map((c) => c.filter_chain_match ?? null)).to.deep.equal([
      { prefix_ranges: [{ address_prefix: '10.96.0.7', prefix_len: { value: 32 } }, { address_prefix: '10.97.0.0', prefix_len: { value: 16 } }] },
      { prefix_ranges: [{ address_prefix: '10.98.0.1', prefix_len: { value: 32 } }] },
      null,
    ]);
    expect(chains[1].filters).to.deep.equal([tcpProxy('outbound|9000||vip2.foo.svc.cluster.local')]);
  });

  it('splits TCP traffic by the weights of a VirtualService TCP route', () => {
    const push = pushOf(`${CONFIG}
---
apiVersion: networking.mesh.io/v1
kind: VirtualService
metadata: { name: db, namespace: foo }
spec:
  hosts: [a-db.foo.svc.cluster.local]
  tcp:
  - match: [{ port: 9000 }]
    route:
    - { destination: { host: a-db.foo.svc.cluster.local }, weight: 80 }
    - { destination: { host: db.foo.svc.cluster.local }, weight: 20 }
`);
    const listeners = listenersOf(new SidecarGenerator({}), push, proxyOf('10.1.1.1', 'foo', {}, 'NONE'), ['127.0.0.1_9000']);
    expect(listeners['127.0.0.1_9000'].filter_chains).to.deep.equal([
      {
        filters: [
          {
            name: 'envoy.filters.network.tcp_proxy',
            typed_config: {
              '@type': TCP_PROXY,
              stat_prefix: 'outbound|9000||a-db.foo.svc.cluster.local',
              weighted_clusters: {
                clusters: [
                  { name: 'outbound|9000||a-db.foo.svc.cluster.local', weight: 80 },
                  { name: 'outbound|9000||db.foo.svc.cluster.local', weight: 20 },
                ],
              },
            },
          },
        ],
      },
    ]);
  });

  it('places contributed filters: HTTP filters before fault/router, network filters before or instead of tcp_proxy', () => {
    const contexts: string[] = [];
    const marker = (name: string) => ({ name, typed_config: { '@type': 'type.googleapis.com/envoy.extensions.filters.http.router.v3.Router' } });
    const httpFilters: HttpFilterContributor = {
      httpFilters(ctx: FilterChainContext) {
        contexts.push(`http ${ctx.direction} ${ctx.port.number} ${ctx.service?.hostname ?? '-'}`);
        return [marker(`test.http.${ctx.direction}`)];
      },
    };
    const rbac = (name: string) => ({ name, typed_config: { '@type': 'type.googleapis.com/envoy.extensions.filters.network.rbac.v3.RBAC', stat_prefix: name } });
    const networkFilters: NetworkFilterContributor = {
      networkFilters(ctx: FilterChainContext, cluster: string) {
        contexts.push(`tcp ${ctx.direction} ${ctx.port.number} ${cluster}`);
        if (ctx.direction === 'outbound' && ctx.service?.hostname === 'vip.foo.svc.cluster.local') {
          return { terminal: { name: 'test.kv', typed_config: { '@type': TCP_PROXY, stat_prefix: 'kv', cluster } } };
        }
        return { before: [rbac(`test.rbac.${ctx.direction}`)] };
      },
    };
    const gen = new SidecarGenerator({ httpFilters: [httpFilters], networkFilters: [networkFilters] });
    const proxy = proxyOf('127.0.0.10', 'foo', { app: 'httpbin' }, 'REDIRECT');
    const listeners = listenersOf(gen, pushOf(CONFIG), proxy);
    const hcmOut = outboundHcm('outbound_0.0.0.0_8000', '8000', [marker('test.http.outbound')]);
    expect(listeners['0.0.0.0_8000'].filter_chains).to.deep.equal([{ filters: [hcmOut] }]);
    expect(listeners['0.0.0.0_9000'].filter_chains).to.deep.equal([
      {
        filter_chain_match: (listeners['0.0.0.0_9000'].filter_chains as Record<string, unknown>[])[0].filter_chain_match,
        filters: [{ name: 'test.kv', typed_config: { '@type': TCP_PROXY, stat_prefix: 'kv', cluster: 'outbound|9000||vip.foo.svc.cluster.local' } }],
      },
      { filters: [rbac('test.rbac.outbound'), tcpProxy('outbound|9000||a-db.foo.svc.cluster.local')] },
    ]);
    const inbound = listeners.virtualInbound.filter_chains as Record<string, unknown>[];
    expect(inbound[0].filters).to.deep.equal([inboundHcm('inbound_0.0.0.0_8080', 8000, [marker('test.http.inbound')])]);
    expect(inbound[1].filters).to.deep.equal([rbac('test.rbac.inbound'), tcpProxy('inbound|9000||')]);
    expect(contexts).to.include.members([
      'http outbound 8000 httpbin.foo.svc.cluster.local',
      'http inbound 8000 httpbin.foo.svc.cluster.local',
      'tcp inbound 9000 inbound|9000||',
      'tcp outbound 9000 outbound|9000||a-db.foo.svc.cluster.local',
    ]);
  });
});
