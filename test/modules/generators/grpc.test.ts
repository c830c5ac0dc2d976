import { expect } from 'chai';
import { GrpcGenerator } from '../../../src/modules/generators/grpc/generator';
import { TypeUrl, XdsTypeUrl } from '../../../src/modules/envoy/type-urls';
import {
  ADS_CONFIG_SOURCE, decodedOf, edsClusterConfig, FAULT_FILTER, HCM_TYPE, million, ROUTER_FILTER, VirtualHost,
} from '../../helpers/envoy';
import { proxyOf, pushOf } from '../../helpers/push';

const CONFIG = `
apiVersion: networking.mesh.io/v1
kind: ServiceEntry
metadata: {name: echo, namespace: foo}
spec:
  hosts: [echo.foo.svc.cluster.local]
  location: MESH_INTERNAL
  resolution: STATIC
  ports: [{name: grpc, number: 7070, protocol: GRPC}]
  workloadSelector: {labels: {app: echo}}
---
apiVersion: networking.mesh.io/v1
kind: WorkloadEntry
metadata: {name: echo-1, namespace: foo}
spec: {address: 127.0.0.11, labels: {app: echo, version: v1}, ports: {grpc: 17070}, locality: us-east/a}
---
apiVersion: networking.mesh.io/v1
kind: WorkloadEntry
metadata: {name: echo-2, namespace: foo}
spec: {address: 127.0.0.12, labels: {app: echo, version: v2}, ports: {grpc: 17071}, weight: 3, locality: us-east/a}
---
apiVersion: networking.mesh.io/v1
kind: DestinationRule
metadata: {name: echo, namespace: foo}
spec:
  host: echo.foo.svc.cluster.local
  subsets:
  - {name: v1, labels: {version: v1}}
  - {name: v2, labels: {version: v2}}
---
apiVersion: networking.mesh.io/v1
kind: VirtualService
metadata: {name: echo, namespace: foo}
spec:
  hosts: [echo.foo.svc.cluster.local]
  http:
  - match: [{headers: {x-canary: {exact: "true"}}}]
    route: [{destination: {host: echo.foo.svc.cluster.local, subset: v2}}]
  - route:
    - {destination: {host: echo.foo.svc.cluster.local, subset: v1}, weight: 80}
    - {destination: {host: echo.foo.svc.cluster.local, subset: v2}, weight: 20}
    timeout: 3s
    fault: {abort: {grpcStatus: UNAVAILABLE, percentage: {value: 1}}}
`;

const push = pushOf(CONFIG);
const proxy = proxyOf('127.0.0.50', 'foo', {}, { GENERATOR: 'grpc' });
const generator = new GrpcGenerator();

const generate = (typeUrl: XdsTypeUrl, names: string[]) => decodedOf(generator, typeUrl, push, proxy, names);

describe('proxyless gRPC generator (GENERATOR=grpc)', () => {
  it('answers the listener of an xds:/// target with an API listener pointing at its route table', () => {
    expect(generate(TypeUrl.Listener, ['echo.foo.svc.cluster.local:7070'])).to.deep.equal({
      'echo.foo.svc.cluster.local:7070': {
        name: 'echo.foo.svc.cluster.local:7070',
        api_listener: {
          api_listener: {
            '@type': HCM_TYPE,
            stat_prefix: 'echo.foo.svc.cluster.local:7070',
            rds: { config_source: ADS_CONFIG_SOURCE, route_config_name: 'outbound|7070||echo.foo.svc.cluster.local' },
            http_filters: [FAULT_FILTER, ROUTER_FILTER],
          },
        },
      },
    });
  });

  it('takes the single port of a service when the target names none, and knows nothing of unknown hosts', () => {
    expect(Object.keys(generate(TypeUrl.Listener, ['echo.foo.svc.cluster.local', 'nope.foo.svc.cluster.local:1']))).to.deep.equal(['echo.foo.svc.cluster.local']);
  });

  it('routes by the VirtualService: header match, weighted subsets, timeout as max stream duration, fault', () => {
    const rds = generate(TypeUrl.RouteConfiguration, ['outbound|7070||echo.foo.svc.cluster.local'])['outbound|7070||echo.foo.svc.cluster.local'];
    const [vh] = rds.virtual_hosts as VirtualHost[];
    expect(vh.domains).to.deep.equal(['echo.foo.svc.cluster.local', 'echo.foo.svc.cluster.local:7070']);
    expect(vh.routes).to.have.length(2);
    const [canary, split] = vh.routes;
    expect(canary.match).to.deep.equal({ prefix: '/', headers: [{ name: 'x-canary', string_match: { exact: 'true' } }] });
    expect((canary.route as Record<string, unknown>).cluster).to.equal('outbound|7070|v2|echo.foo.svc.cluster.local');
    const action = split.route as Record<string, unknown>;
    expect(action.weighted_clusters).to.deep.equal({
      clusters: [
        { name: 'outbound|7070|v1|echo.foo.svc.cluster.local', weight: { value: 80 } },
        { name: 'outbound|7070|v2|echo.foo.svc.cluster.local', weight: { value: 20 } },
      ],
    });
    expect(action.max_stream_duration).to.deep.equal({ max_stream_duration: { seconds: '3' } });
    expect(split.typed_per_filter_config).to.deep.equal({
      'envoy.filters.http.fault': {
        '@type': 'type.googleapis.com/envoy.extensions.filters.http.fault.v3.HTTPFault',
        abort: { grpc_status: 14, percentage: million(10000) },
      },
    });
  });

  it('gives EDS clusters named outbound|<port>|<subset>|<host>, round robin', () => {
    const cds = generate(TypeUrl.Cluster, ['outbound|7070||echo.foo.svc.cluster.local', 'outbound|7070|v2|echo.foo.svc.cluster.local', 'outbound|7070|v9|echo.foo.svc.cluster.local']);
    expect(Object.keys(cds)).to.deep.equal(['outbound|7070||echo.foo.svc.cluster.local', 'outbound|7070|v2|echo.foo.svc.cluster.local']);
    const c = cds['outbound|7070|v2|echo.foo.svc.cluster.local'];
    expect(c.type).to.equal('EDS');
    expect(c.lb_policy ?? 'ROUND_ROBIN').to.equal('ROUND_ROBIN');
    expect(c.eds_cluster_config).to.deep.equal(edsClusterConfig('outbound|7070|v2|echo.foo.svc.cluster.local'));
  });

  it('gives endpoints by locality with weights (gRPC ignores localities without one); subsets filter by labels', () => {
    const eds = generate(TypeUrl.ClusterLoadAssignment, ['outbound|7070||echo.foo.svc.cluster.local', 'outbound|7070|v1|echo.foo.svc.cluster.local']);
    const all = eds['outbound|7070||echo.foo.svc.cluster.local'] as { endpoints: Array<Record<string, unknown>> };
    expect(all.endpoints).to.have.length(1);
    const group = all.endpoints[0] as { locality: unknown; load_balancing_weight: unknown; lb_endpoints: Array<Record<string, unknown>> };
    expect(group.locality).to.deep.equal({ region: 'us-east', zone: 'a' });
    expect(group.load_balancing_weight).to.deep.equal({ value: 4 });
    expect(group.lb_endpoints.map((e) => [(e.endpoint as { address: { socket_address: unknown } }).address.socket_address, e.load_balancing_weight])).to.deep.equal([
      [{ address: '127.0.0.11', port_value: 17070 }, { value: 1 }],
      [{ address: '127.0.0.12', port_value: 17071 }, { value: 3 }],
    ]);
    const v1 = eds['outbound|7070|v1|echo.foo.svc.cluster.local'] as { endpoints: Array<{ lb_endpoints: unknown[] }> };
    expect(v1.endpoints[0].lb_endpoints).to.have.length(1);
  });
});
