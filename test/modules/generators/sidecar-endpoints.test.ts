import { expect } from 'chai';
import { EndpointContributor, runsOf } from '../../../src/modules/model/generator';
import { buildLoadAssignment } from '../../../src/modules/generators/common';
import { SidecarGenerator } from '../../../src/modules/generators/sidecar';
import { decodeMessage } from '../../../src/modules/envoy/protos';
import { TypeUrl } from '../../../src/modules/envoy/type-urls';
import { endpointsOf, lbEndpoint, roundTrip } from '../../helpers/envoy';
import { proxyOf, pushOf, serviceEntryYaml } from '../../helpers/push';

const CONFIG = `
apiVersion: networking.mesh.io/v1
kind: ServiceEntry
metadata: { name: reviews, namespace: bookinfo }
spec:
  hosts: [reviews.bookinfo.svc.cluster.local]
  location: MESH_INTERNAL
  resolution: STATIC
  ports:
  - { number: 9080, name: http, protocol: HTTP, targetPort: 8080 }
  workloadSelector: { labels: { app: reviews } }
---
apiVersion: networking.mesh.io/v1
kind: WorkloadEntry
metadata: { name: reviews-v1, namespace: bookinfo }
spec: { address: 10.0.0.1, labels: { app: reviews, version: v1 }, locality: us-east/a/rack1, weight: 2 }
---
apiVersion: networking.mesh.io/v1
kind: WorkloadEntry
metadata: { name: reviews-v2a, namespace: bookinfo }
spec: { address: 10.0.0.2, labels: { app: reviews, version: v2 }, locality: us-east/b, ports: { http: 9999 } }
---
apiVersion: networking.mesh.io/v1
kind: WorkloadEntry
metadata: { name: reviews-v2b, namespace: bookinfo }
spec: { address: 10.0.0.3, labels: { app: reviews, version: v2 }, locality: us-east/b, weight: 3 }
---
apiVersion: networking.mesh.io/v1
kind: WorkloadEntry
metadata: { name: reviews-remote, namespace: bookinfo }
spec: { labels: { app: reviews, version: v3 }, network: far-away }
---
apiVersion: networking.mesh.io/v1
kind: DestinationRule
metadata: { name: reviews, namespace: bookinfo }
spec:
  host: reviews
  subsets:
  - name: v1
    labels: { version: v1 }
  - name: v2
    labels: { version: v2 }
`;

const DEFAULT = 'outbound|9080||reviews.bookinfo.svc.cluster.local';
const V2 = 'outbound|9080|v2|reviews.bookinfo.svc.cluster.local';

describe('sidecar generator: EDS', () => {
  const client = proxyOf('10.0.9.9', 'bookinfo', { app: 'productpage' });

  it('groups endpoints by locality, each weighted by the sum of its endpoint weights', () => {
    const push = pushOf(CONFIG);
    const cla = endpointsOf(new SidecarGenerator({}), push, client, [DEFAULT])[DEFAULT];
    expect(cla).to.deep.equal({
      cluster_name: DEFAULT,
      endpoints: [
        {
          locality: { region: 'us-east', zone: 'a', sub_zone: 'rack1' },
          lb_endpoints: [lbEndpoint('10.0.0.1', 8080, 2)],
          load_balancing_weight: { value: 2 },
        },
        {
          locality: { region: 'us-east', zone: 'b' },
          // The workload's own port for the service port name wins over targetPort.
          lb_endpoints: [lbEndpoint('10.0.0.2', 9999), lbEndpoint('10.0.0.3', 8080, 3)],
          load_balancing_weight: { value: 4 },
        },
      ],
    });
  });

  it('keeps a subset to the endpoints with its labels', () => {
    const push = pushOf(CONFIG);
    const all = endpointsOf(new SidecarGenerator({}), push, client, [V2, 'outbound|9080|v1|reviews.bookinfo.svc.cluster.local']);
    expect(all[V2]).to.deep.equal({
      cluster_name: V2,
      endpoints: [
        { locality: { region: 'us-east', zone: 'b' }, lb_endpoints: [lbEndpoint('10.0.0.2', 9999), lbEndpoint('10.0.0.3', 8080, 3)], load_balancing_weight: { value: 4 } },
      ],
    });
    expect((all['outbound|9080|v1|reviews.bookinfo.svc.cluster.local'].endpoints as unknown[]).length).to.equal(1);
  });

  it('leaves out names it does not know, and answers a wildcard request with every EDS cluster', () => {
    const push = pushOf(CONFIG);
    const gen = new SidecarGenerator({});
    const names = [
      DEFAULT,
      'outbound|9080|v9|reviews.bookinfo.svc.cluster.local', // no such subset
      'outbound|1234||reviews.bookinfo.svc.cluster.local', // no such port
      'outbound|9080||nope.example.com',
      'inbound|9080||',
      'PassthroughCluster',
    ];
    expect(Object.keys(endpointsOf(gen, push, client, names))).to.deep.equal([DEFAULT]);
    expect(buildLoadAssignment(push, client, 'outbound|9080|v9|reviews.bookinfo.svc.cluster.local')).to.equal(undefined);
    expect(Object.keys(endpointsOf(gen, push, client))).to.deep.equal([
      DEFAULT,
      'outbound|9080|v1|reviews.bookinfo.svc.cluster.local',
      V2,
    ]);
  });

  it('gives a service without endpoints an empty assignment', () => {
    const push = pushOf(serviceEntryYaml('bookinfo', 'empty', 'empty.bookinfo.svc.cluster.local', 'STATIC', '{ number: 80, name: http, protocol: HTTP }'));
    const name = 'outbound|80||empty.bookinfo.svc.cluster.local';
    expect(endpointsOf(new SidecarGenerator({}), push, client, [name])[name]).to.deep.equal({ cluster_name: name });
  });

  it('lets EndpointContributors patch each endpoint', () => {
    const contributor: EndpointContributor = {
      patchEndpoint(lb, endpoint) {
        lb.metadata = { filter_metadata: { mesh: { fields: { workload: { string_value: endpoint.workload } } } } };
      },
    };
    const push = pushOf(CONFIG);
    const cla = endpointsOf(new SidecarGenerator({ endpoints: [contributor] }), push, client, [DEFAULT])[DEFAULT];
    const first = (cla.endpoints as { lb_endpoints: Record<string, unknown>[] }[])[0].lb_endpoints[0];
    expect(first.metadata).to.deep.equal({ filter_metadata: { mesh: { fields: { workload: { string_value: 'WorkloadEntry/bookinfo/reviews-v1' } } } } });
    // The builder the gRPC generator uses takes the same contributors.
    const built = buildLoadAssignment(push, client, DEFAULT, [contributor])!;
    expect(roundTrip(TypeUrl.ClusterLoadAssignment, built)).to.deep.equal(cla);
  });

  it('shares an encoded assignment between proxies, per DestinationRule for subsets', () => {
    const push = pushOf(`${CONFIG}
---
apiVersion: networking.mesh.io/v1
kind: DestinationRule
metadata: { name: reviews-local, namespace: other }
spec:
  host: reviews.bookinfo.svc.cluster.local
  subsets:
  - name: v2
    labels: { version: v1 }
`);
    const gen = new SidecarGenerator({});
    const a = gen.generate({ proxy: client, push, typeUrl: TypeUrl.ClusterLoadAssignment, names: [DEFAULT, V2] });
    const b = gen.generate({ proxy: proxyOf('10.0.9.8', 'bookinfo', {}), push, typeUrl: TypeUrl.ClusterLoadAssignment, names: [DEFAULT, V2] });
    const c = gen.generate({ proxy: proxyOf('10.0.9.7', 'other', {}), push, typeUrl: TypeUrl.ClusterLoadAssignment, names: [DEFAULT, V2] });
    expect(a[0].body).to.equal(b[0].body);
    expect(a[0].body).to.equal(c[0].body);
    expect(a[1].body).to.equal(b[1].body);
    // The other namespace's own rule defines v2 differently.
    const v2Elsewhere = decodeMessage(TypeUrl.ClusterLoadAssignment, c[1].body) as { endpoints: { lb_endpoints: unknown[] }[] };
    expect(v2Elsewhere.endpoints[0].lb_endpoints).to.deep.equal([lbEndpoint('10.0.0.1', 8080, 2)]);
  });
});

describe('sidecar generator: EDS answers shared by a push', () => {
  it('hands proxies of one scope asking for the same names one frozen list, made of one run', () => {
    const push = pushOf(CONFIG);
    const gen = new SidecarGenerator({});
    const ask = (ip: string) => gen.generate({ proxy: proxyOf(ip, 'bookinfo', {}), push, typeUrl: TypeUrl.ClusterLoadAssignment, names: [DEFAULT, V2] });
    const a = ask('10.0.9.8');
    const b = ask('10.0.9.9');
    expect(b, 'the same list, not a copy per proxy').to.equal(a);
    expect(Object.isFrozen(a)).to.equal(true);
    expect(runsOf(a)).to.deep.equal([a]);
    expect(a.map((r) => r.name)).to.deep.equal([DEFAULT, V2]);
    // Another push answers anew.
    expect(gen.generate({ proxy: proxyOf('10.0.9.8', 'bookinfo', {}), push: pushOf(CONFIG, '2'), typeUrl: TypeUrl.ClusterLoadAssignment, names: [DEFAULT, V2] })).not.to.equal(a);
  });
});
