import { expect } from 'chai';
import { FilterChainContext, HttpFilterContributor, NetworkFilterContributor } from '../../../src/modules/model/generator';
import { PATH_NORMALIZATION_MODES, PathNormalizationMode, SidecarGenerator } from '../../../src/modules/generators/sidecar';
import {
  ADS_CONFIG_SOURCE, CORS_FILTER, FAULT_FILTER, HCM_TYPE, listenersOf, Obj, ROUTER_FILTER, TCP_PROXY_TYPE, tcpProxy,
} from '../../helpers/envoy';
import { proxyOf, pushOf, serviceEntryYaml, workloadServiceYaml } from '../../helpers/push';
import { TypeUrl, XdsTypeUrl } from '../../../src/modules/envoy/type-urls';

const LISTENER = TypeUrl.Listener;
const CLUSTER = TypeUrl.Cluster;

/** What every HTTP connection manager carries by default (mesh config pathNormalization BASE). */
const BASE_PATH_NORMALIZATION = { normalize_path: { value: true }, path_with_escaped_slashes_action: 'KEEP_UNCHANGED' };

const outboundHcm = (statPrefix: string, route: string, filters: unknown[] = []) => ({
  name: 'envoy.filters.network.http_connection_manager',
  typed_config: {
    '@type': HCM_TYPE,
    stat_prefix: statPrefix,
    ...BASE_PATH_NORMALIZATION,
    rds: { config_source: ADS_CONFIG_SOURCE, route_config_name: route },
    http_filters: [...filters, CORS_FILTER, FAULT_FILTER, ROUTER_FILTER],
    upgrade_configs: [{ upgrade_type: 'websocket' }],
  },
});
const inboundHcm = (statPrefix: string, port: number, filters: unknown[] = []) => ({
  name: 'envoy.filters.network.http_connection_manager',
  typed_config: {
    '@type': HCM_TYPE,
    stat_prefix: statPrefix,
    ...BASE_PATH_NORMALIZATION,
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
    http_filters: [...filters, ROUTER_FILTER],
    upgrade_configs: [{ upgrade_type: 'websocket' }],
  },
});
/** The listener `<address>_<port>` with one filter chain of `filters`. */
const listener = (address: string, port: number, direction: 'INBOUND' | 'OUTBOUND', filters: unknown[]) => ({
  name: `${address}_${port}`,
  address: { socket_address: { address, port_value: port } },
  traffic_direction: direction,
  filter_chains: [{ filters }],
});

const CONFIG = `
${workloadServiceYaml({ namespace: 'foo', name: 'httpbin', address: '127.0.0.10', ports: ['{ number: 8000, name: http, protocol: HTTP, targetPort: 8080 }', '{ number: 9000, name: tcp, protocol: TCP, targetPort: 9001 }'] })}
${serviceEntryYaml('foo', 'db', 'db.foo.svc.cluster.local, a-db.foo.svc.cluster.local', 'STATIC', '{ number: 9000, name: tcp, protocol: TCP }')}
${serviceEntryYaml('foo', 'vip', 'vip.foo.svc.cluster.local', 'STATIC', '{ number: 9000, name: tcp, protocol: TCP }', `
  addresses: [10.96.0.7, 10.97.0.0/16]`)}`;

/** CONFIG and the Sidecar `default` of namespace foo, with `spec` (YAML lines) as its spec. */
const withSidecar = (spec: string) => `${CONFIG}
---
apiVersion: networking.mesh.io/v1
kind: Sidecar
metadata: { name: default, namespace: foo }
spec:${spec}
`;

describe('sidecar generator: LDS', () => {
  describe('without traffic capture (interceptionMode NONE)', () => {
    const httpbin = proxyOf('127.0.0.10', 'foo', { app: 'httpbin', version: 'v1' }, { INTERCEPTION_MODE: 'NONE' });

    it('binds INSTANCE_IP:<service port> inbound, forwarding to the inbound cluster (127.0.0.1:<workload port>)', () => {
      const listeners = listenersOf(new SidecarGenerator({}), pushOf(CONFIG), httpbin);
      expect(listeners['127.0.0.10_8000']).to.deep.equal(listener('127.0.0.10', 8000, 'INBOUND', [inboundHcm('inbound_127.0.0.10_8000', 8000)]));
      expect(listeners['127.0.0.10_9000']).to.deep.equal(listener('127.0.0.10', 9000, 'INBOUND', [tcpProxy('inbound|9000||')]));
    });

    it('binds 127.0.0.1:<service port> outbound: RDS for HTTP ports, tcp_proxy for TCP ports (first host wins)', () => {
      const listeners = listenersOf(new SidecarGenerator({}), pushOf(CONFIG), httpbin);
      expect(listeners['127.0.0.1_8000']).to.deep.equal(listener('127.0.0.1', 8000, 'OUTBOUND', [outboundHcm('outbound_127.0.0.1_8000', '8000')]));
      expect(listeners['127.0.0.1_9000']).to.deep.equal(listener('127.0.0.1', 9000, 'OUTBOUND', [tcpProxy('outbound|9000||a-db.foo.svc.cluster.local')]));
      expect(Object.keys(listeners).sort()).to.deep.equal(['127.0.0.10_8000', '127.0.0.10_9000', '127.0.0.1_8000', '127.0.0.1_9000']);
    });

    it('binds where a Sidecar egress listener says, with the route table named <bind>:<port>', () => {
      const push = pushOf(withSidecar(`
  egress:
  - port: { number: 8000, protocol: HTTP, name: http }
    bind: 127.0.0.2
    hosts: ["./httpbin.foo.svc.cluster.local"]`));
      const listeners = listenersOf(new SidecarGenerator({}), push, httpbin);
      expect(Object.keys(listeners).sort()).to.deep.equal(['127.0.0.10_8000', '127.0.0.10_9000', '127.0.0.2_8000']);
      expect(listeners['127.0.0.2_8000']).to.deep.equal(listener('127.0.0.2', 8000, 'OUTBOUND', [outboundHcm('outbound_127.0.0.2_8000', '127.0.0.2:8000')]));
    });
  });

  describe('with traffic capture', () => {
    it('REDIRECT: virtualOutbound on 15001, unbound per-port listeners, virtualInbound on 15006', () => {
      const proxy = proxyOf('127.0.0.10', 'foo', { app: 'httpbin', version: 'v1' }, { INTERCEPTION_MODE: 'REDIRECT' });
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
        ...listener('0.0.0.0', 8000, 'OUTBOUND', [outboundHcm('outbound_0.0.0.0_8000', '8000')]),
        bind_to_port: { value: false },
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
      const proxy = proxyOf('127.0.0.10', 'foo', { app: 'httpbin' }, { INTERCEPTION_MODE: 'TPROXY' });
      const listeners = listenersOf(new SidecarGenerator({}), pushOf(CONFIG), proxy, ['virtualInbound']);
      expect(Object.keys(listeners)).to.deep.equal(['virtualInbound']);
      expect(listeners.virtualInbound.transparent).to.deep.equal({ value: true });
    });

    it('REGISTRY_ONLY sends unknown destinations to BlackHoleCluster', () => {
      const push = pushOf(withSidecar(`
  egress: [{ hosts: ["*/*"] }]
  outboundTrafficPolicy: { mode: REGISTRY_ONLY }`));
      const listeners = listenersOf(new SidecarGenerator({}), push, proxyOf('10.1.1.1', 'foo', {}), ['virtualOutbound']);
      expect(listeners.virtualOutbound.default_filter_chain).to.deep.equal({ name: 'virtualOutbound-catchall-tcp', filters: [tcpProxy('BlackHoleCluster')] });
    });
  });

  describe('the inbound side of replicas', () => {
    // Two replicas of httpbin (same labels and ports) and one of another version.
    const REPLICAS = `${CONFIG}
---
apiVersion: networking.mesh.io/v1
kind: WorkloadEntry
metadata: { name: httpbin-v1b, namespace: foo }
spec: { address: 127.0.0.11, labels: { app: httpbin, version: v1 } }
---
apiVersion: networking.mesh.io/v1
kind: WorkloadEntry
metadata: { name: httpbin-v2, namespace: foo }
spec: { address: 127.0.0.12, labels: { app: httpbin, version: v2 }, ports: { http: 8081 } }
`;
    /** Inbound HTTP chains built, by the labels of the proxy they were built for. */
    let built: string[] = [];
    const counting: HttpFilterContributor = {
      httpFilters(ctx: FilterChainContext) {
        if (ctx.direction === 'inbound') built.push(ctx.proxy.labels.version);
        return [];
      },
    };
    const generator = new SidecarGenerator({ httpFilters: [counting] });
    const generate = (push: ReturnType<typeof pushOf>, ip: string, version: string, mode: string, typeUrl: XdsTypeUrl) =>
      generator.generate({
        proxy: proxyOf(ip, 'foo', { app: 'httpbin', version }, { INTERCEPTION_MODE: mode }),
        push,
        typeUrl,
        names: undefined,
      });
    const inboundOf = (resources: { name: string; body: Buffer }[], names: string[]) => resources.filter((r) => names.includes(r.name)).map((r) => r.body);

    it('is built once for replicas with the same labels and ports, and apart for any that differ', () => {
      const push = pushOf(REPLICAS);
      built = [];
      const lds = (ip: string, version: string) => inboundOf(generate(push, ip, version, 'REDIRECT', LISTENER), ['virtualInbound']);
      const cds = (ip: string, version: string) => inboundOf(generate(push, ip, version, 'REDIRECT', CLUSTER), ['inbound|8000||', 'inbound|9000||']);
      const [a, b, other] = [lds('127.0.0.10', 'v1'), lds('127.0.0.11', 'v1'), lds('127.0.0.12', 'v2')];
      expect(a).to.have.length(1);
      expect(b[0]).to.equal(a[0], 'the same encoded listener, not an equal one');
      expect(other[0].equals(a[0])).to.equal(false, 'another workload port is another chain match');
      expect(cds('127.0.0.11', 'v1')).to.deep.equal(cds('127.0.0.10', 'v1'));
      expect(cds('127.0.0.11', 'v1')[0]).to.equal(cds('127.0.0.10', 'v1')[0]);
      // Same ports, other labels (policies may select one and not the other): built apart.
      lds('127.0.0.11', 'v3');
      expect(built).to.deep.equal(['v1', 'v2', 'v3'], 'one inbound HTTP chain built per distinct inbound side');
    });

    it('stays per address without capture, where listeners are named after and bound to it', () => {
      const push = pushOf(REPLICAS);
      const names = (ip: string) => generate(push, ip, 'v1', 'NONE', LISTENER).map((r) => r.name).filter((n) => n.startsWith(ip));
      expect(names('127.0.0.10')).to.deep.equal(['127.0.0.10_8000', '127.0.0.10_9000']);
      expect(names('127.0.0.11')).to.deep.equal(['127.0.0.11_8000', '127.0.0.11_9000']);
    });
  });

  it('gives an address to the first TCP service claiming it, so filter chains never overlap', () => {
    const vip2 = serviceEntryYaml('foo', 'vip2', 'vip2.foo.svc.cluster.local', 'STATIC', '{ number: 9000, name: tcp, protocol: TCP }', `
  addresses: [10.96.0.7, 10.98.0.1]`);
    const push = pushOf(CONFIG + vip2);
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
    const listeners = listenersOf(new SidecarGenerator({}), push, proxyOf('10.1.1.1', 'foo', {}, { INTERCEPTION_MODE: 'NONE' }), ['127.0.0.1_9000']);
    expect(listeners['127.0.0.1_9000'].filter_chains).to.deep.equal([
      {
        filters: [
          {
            name: 'envoy.filters.network.tcp_proxy',
            typed_config: {
              '@type': TCP_PROXY_TYPE,
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
          return { terminal: { name: 'test.kv', typed_config: { '@type': TCP_PROXY_TYPE, stat_prefix: 'kv', cluster } } };
        }
        return { before: [rbac(`test.rbac.${ctx.direction}`)] };
      },
    };
    const gen = new SidecarGenerator({ httpFilters: [httpFilters], networkFilters: [networkFilters] });
    const proxy = proxyOf('127.0.0.10', 'foo', { app: 'httpbin' }, { INTERCEPTION_MODE: 'REDIRECT' });
    const listeners = listenersOf(gen, pushOf(CONFIG), proxy);
    const hcmOut = outboundHcm('outbound_0.0.0.0_8000', '8000', [marker('test.http.outbound')]);
    expect(listeners['0.0.0.0_8000'].filter_chains).to.deep.equal([{ filters: [hcmOut] }]);
    expect(listeners['0.0.0.0_9000'].filter_chains).to.deep.equal([
      {
        filter_chain_match: (listeners['0.0.0.0_9000'].filter_chains as Record<string, unknown>[])[0].filter_chain_match,
        filters: [{ name: 'test.kv', typed_config: { '@type': TCP_PROXY_TYPE, stat_prefix: 'kv', cluster: 'outbound|9000||vip.foo.svc.cluster.local' } }],
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

  describe('path normalization (mesh config pathNormalization.normalization)', () => {
    const hcmFields = (gen: SidecarGenerator, mode: string) => {
      const listeners = listenersOf(gen, pushOf(CONFIG), proxyOf('127.0.0.10', 'foo', { app: 'httpbin', version: 'v1' }, { INTERCEPTION_MODE: 'NONE' }));
      const inbound = (listeners['127.0.0.10_8000'] as Obj).filter_chains[0].filters[0].typed_config;
      const outbound = (listeners['127.0.0.1_8000'] as Obj).filter_chains[0].filters[0].typed_config;
      const pick = (hcm: Obj) => ({ normalize_path: hcm.normalize_path, merge_slashes: hcm.merge_slashes, path_with_escaped_slashes_action: hcm.path_with_escaped_slashes_action });
      expect(pick(outbound), `${mode}: outbound and inbound connection managers carry the same options`).to.deep.equal(pick(inbound));
      return pick(inbound);
    };

    it('carries Envoy\'s options on inbound and outbound HTTP connection managers, per mode (BASE by default)', () => {
      // Decoded as a proxy reads them: an unset merge_slashes is absent (false).
      const expected: Record<string, Obj> = {
        NONE: { normalize_path: { value: false }, merge_slashes: undefined, path_with_escaped_slashes_action: 'KEEP_UNCHANGED' },
        BASE: { normalize_path: { value: true }, merge_slashes: undefined, path_with_escaped_slashes_action: 'KEEP_UNCHANGED' },
        DEFAULT: { normalize_path: { value: true }, merge_slashes: undefined, path_with_escaped_slashes_action: 'KEEP_UNCHANGED' },
        MERGE_SLASHES: { normalize_path: { value: true }, merge_slashes: true, path_with_escaped_slashes_action: 'KEEP_UNCHANGED' },
        DECODE_AND_MERGE_SLASHES: { normalize_path: { value: true }, merge_slashes: true, path_with_escaped_slashes_action: 'UNESCAPE_AND_FORWARD' },
      };
      expect(Object.keys(expected)).to.deep.equal([...PATH_NORMALIZATION_MODES]);
      for (const mode of PATH_NORMALIZATION_MODES) expect(hcmFields(new SidecarGenerator({ pathNormalization: mode }), mode), mode).to.deep.equal(expected[mode]);
      expect(hcmFields(new SidecarGenerator({}), 'default')).to.deep.equal(expected.BASE);
    });

    it('refuses an unknown mode, naming the mesh config field', () => {
      expect(() => new SidecarGenerator({ pathNormalization: 'SOME' as PathNormalizationMode })).to.throw(
        'mesh config pathNormalization.normalization: unknown mode "SOME" (one of NONE, BASE, DEFAULT, MERGE_SLASHES, DECODE_AND_MERGE_SLASHES)',
      );
    });
  });
});
