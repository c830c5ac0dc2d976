import { expect } from 'chai';
import { ClusterContributor } from '../../../src/modules/model/generator';
import { buildOutboundClusters } from '../../../src/modules/generators/common';
import { SidecarGenerator } from '../../../src/modules/generators/sidecar';
import { TypeUrl } from '../../../src/modules/envoy/type-urls';
import { clustersOf, edsClusterConfig as eds, lbEndpoint, meshMetadata as meta, roundTrip } from '../../helpers/envoy';
import { proxyOf, pushOf, serviceEntryYaml } from '../../helpers/push';

const MAX = { value: 4294967295 };
const defaultThresholds = { max_connections: MAX, max_pending_requests: MAX, max_requests: MAX, max_retries: MAX, track_remaining: true };

const REVIEWS = `
apiVersion: networking.mesh.io/v1
kind: ServiceEntry
metadata: { name: reviews, namespace: bookinfo }
spec:
  hosts: [reviews.bookinfo.svc.cluster.local]
  location: MESH_INTERNAL
  resolution: STATIC
  ports:
  - { number: 9080, name: http, protocol: HTTP, targetPort: 8080 }
  - { number: 9090, name: grpc, protocol: GRPC }
  workloadSelector: { labels: { app: reviews } }
---
apiVersion: networking.mesh.io/v1
kind: WorkloadEntry
metadata: { name: reviews-v1, namespace: bookinfo }
spec: { address: 10.0.0.1, labels: { app: reviews, version: v1 } }
---
apiVersion: networking.mesh.io/v1
kind: WorkloadEntry
metadata: { name: reviews-v2, namespace: bookinfo }
spec: { address: 10.0.0.2, labels: { app: reviews, version: v2 } }
`;

/** The DestinationRule `reviews` in bookinfo, with `spec` (YAML lines) as its spec. */
const reviewsRule = (spec: string) => `
---
apiVersion: networking.mesh.io/v1
kind: DestinationRule
metadata: { name: reviews, namespace: bookinfo }
spec:${spec}
`;

const REVIEWS_DR = reviewsRule(`
  host: reviews
  trafficPolicy:
    loadBalancer: { simple: ROUND_ROBIN }
    connectionPool:
      tcp: { maxConnections: 100, connectTimeout: 3s, tcpKeepalive: { probes: 3, time: 60s, interval: 10s } }
      http: { http1MaxPendingRequests: 10, http2MaxRequests: 200, maxRetries: 4, maxRequestsPerConnection: 5, idleTimeout: 30s }
    outlierDetection: { consecutive5xxErrors: 7, interval: 5s, baseEjectionTime: 1m, maxEjectionPercent: 50 }
    portLevelSettings:
    - port: { number: 9090 }
      loadBalancer: { simple: RANDOM }
  subsets:
  - name: v1
    labels: { version: v1 }
  - name: v2
    labels: { version: v2 }
    trafficPolicy:
      loadBalancer:
        consistentHash: { httpHeaderName: x-user, ringHash: { minimumRingSize: 2048 } }`);

describe('sidecar generator: CDS', () => {
  const client = proxyOf('10.0.9.9', 'bookinfo', { app: 'productpage' });

  it('builds EDS clusters with the DestinationRule policy, and one per subset', () => {
    const push = pushOf(REVIEWS + REVIEWS_DR);
    const clusters = clustersOf(new SidecarGenerator({}), push, client);
    const name = 'outbound|9080||reviews.bookinfo.svc.cluster.local';
    const httpOptions = {
      '@type': 'type.googleapis.com/envoy.extensions.upstreams.http.v3.HttpProtocolOptions',
      common_http_protocol_options: { idle_timeout: { seconds: '30' }, max_requests_per_connection: { value: 5 } },
      explicit_http_config: { http_protocol_options: {} },
    };
    const policy = {
      connect_timeout: { seconds: '3' },
      circuit_breakers: {
        thresholds: [{ max_connections: { value: 100 }, max_pending_requests: { value: 10 }, max_requests: { value: 200 }, max_retries: { value: 4 }, track_remaining: true }],
      },
      upstream_connection_options: { tcp_keepalive: { keepalive_probes: { value: 3 }, keepalive_time: { value: 60 }, keepalive_interval: { value: 10 } } },
      typed_extension_protocol_options: { 'envoy.extensions.upstreams.http.v3.HttpProtocolOptions': httpOptions },
      outlier_detection: {
        consecutive_5xx: { value: 7 },
        enforcing_consecutive_5xx: { value: 100 },
        enforcing_success_rate: { value: 0 },
        interval: { seconds: '5' },
        base_ejection_time: { seconds: '60' },
        max_ejection_percent: { value: 50 },
      },
      common_lb_config: { healthy_panic_threshold: { value: 0 } },
    };
    expect(clusters[name]).to.deep.equal({
      name,
      type: 'EDS',
      eds_cluster_config: eds(name),
      lb_policy: 'ROUND_ROBIN',
      ...policy,
      metadata: meta('reviews.bookinfo.svc.cluster.local', 'reviews', 'bookinfo'),
    });

    // The subset's own load balancer overrides the top-level one; the rest is inherited.
    const v2 = 'outbound|9080|v2|reviews.bookinfo.svc.cluster.local';
    expect(clusters[v2]).to.deep.equal({
      name: v2,
      type: 'EDS',
      eds_cluster_config: eds(v2),
      lb_policy: 'RING_HASH',
      ring_hash_lb_config: { minimum_ring_size: { value: '2048' } },
      ...policy,
      metadata: meta('reviews.bookinfo.svc.cluster.local', 'reviews', 'bookinfo', 'v2'),
    });
    expect(clusters['outbound|9080|v1|reviews.bookinfo.svc.cluster.local']).to.include({ lb_policy: 'ROUND_ROBIN' });

    // Port-level settings replace the top-level policy for their port: RANDOM and nothing else;
    // a GRPC port speaks HTTP/2 upstream.
    const grpc = 'outbound|9090||reviews.bookinfo.svc.cluster.local';
    expect(clusters[grpc]).to.deep.equal({
      name: grpc,
      type: 'EDS',
      eds_cluster_config: eds(grpc),
      connect_timeout: { seconds: '10' },
      lb_policy: 'RANDOM',
      circuit_breakers: { thresholds: [defaultThresholds] },
      typed_extension_protocol_options: {
        'envoy.extensions.upstreams.http.v3.HttpProtocolOptions': {
          '@type': 'type.googleapis.com/envoy.extensions.upstreams.http.v3.HttpProtocolOptions',
          explicit_http_config: { http2_protocol_options: {} },
        },
      },
      metadata: meta('reviews.bookinfo.svc.cluster.local', 'reviews', 'bookinfo'),
    });
    // The subset v2 on port 9090 keeps its consistent hash (subset fields beat top-level port settings).
    expect(clusters['outbound|9090|v2|reviews.bookinfo.svc.cluster.local']).to.include({ lb_policy: 'RING_HASH' });
  });

  it('defaults to LEAST_REQUEST, 10s connect timeout and unlimited circuit breakers', () => {
    const push = pushOf(REVIEWS);
    const clusters = clustersOf(new SidecarGenerator({}), push, client);
    const name = 'outbound|9080||reviews.bookinfo.svc.cluster.local';
    expect(clusters[name]).to.deep.equal({
      name,
      type: 'EDS',
      eds_cluster_config: eds(name),
      connect_timeout: { seconds: '10' },
      lb_policy: 'LEAST_REQUEST',
      circuit_breakers: { thresholds: [defaultThresholds] },
      metadata: meta('reviews.bookinfo.svc.cluster.local', 'reviews', 'bookinfo'),
    });
    expect(Object.keys(clusters).filter((n) => n.startsWith('outbound'))).to.deep.equal([
      'outbound|9080||reviews.bookinfo.svc.cluster.local',
      'outbound|9090||reviews.bookinfo.svc.cluster.local',
    ]);
  });

  it('maps the other load balancers: maglev, the older minimumRingSize, PASSTHROUGH', () => {
    const dr = (lb: string) => reviewsRule(`
  host: reviews.bookinfo.svc.cluster.local
  trafficPolicy:
    loadBalancer: ${lb}`);
    const name = 'outbound|9080||reviews.bookinfo.svc.cluster.local';
    const get = (lb: string) => clustersOf(new SidecarGenerator({}), pushOf(REVIEWS + dr(lb)), client, [name])[name];
    const maglev = get('{ consistentHash: { useSourceIp: true, maglev: { tableSize: 65537 } } }');
    expect(maglev).to.include({ lb_policy: 'MAGLEV' });
    expect(maglev.maglev_lb_config).to.deep.equal({ table_size: { value: '65537' } });
    const ring = get('{ consistentHash: { httpCookie: { name: user, ttl: 0s } } }');
    expect(ring).to.include({ lb_policy: 'RING_HASH' });
    expect(ring.ring_hash_lb_config).to.deep.equal({ minimum_ring_size: { value: '1024' } });
    const passthrough = get('{ simple: PASSTHROUGH }');
    expect(passthrough).to.include({ type: 'ORIGINAL_DST', lb_policy: 'CLUSTER_PROVIDED' });
    expect(passthrough).to.not.have.property('eds_cluster_config');
  });

  it('resolves DNS services with inline endpoints and NONE services by original destination', () => {
    const endpoints = `
  endpoints:
  - { address: a.example.com, locality: eu/west }
  - { address: b.example.com, weight: 3, locality: eu/west }`;
    const push = pushOf(`
${serviceEntryYaml('egress', 'external', 'api.example.com', 'DNS', '{ number: 443, name: tls, protocol: TLS }', endpoints)}
${serviceEntryYaml('egress', 'rr', 'rr.example.com', 'DNS_ROUND_ROBIN', '{ number: 80, name: http, protocol: HTTP }')}
${serviceEntryYaml('egress', 'any', 'db.example.com', 'NONE', '{ number: 5432, name: tcp, protocol: TCP }')}
`);
    const clusters = clustersOf(new SidecarGenerator({}), push, client);
    const dns = 'outbound|443||api.example.com';
    expect(clusters[dns]).to.deep.equal({
      name: dns,
      type: 'STRICT_DNS',
      connect_timeout: { seconds: '10' },
      dns_lookup_family: 'V4_ONLY',
      respect_dns_ttl: true,
      dns_refresh_rate: { seconds: '60' },
      lb_policy: 'LEAST_REQUEST',
      load_assignment: {
        cluster_name: dns,
        endpoints: [{ locality: { region: 'eu', zone: 'west' }, lb_endpoints: [lbEndpoint('a.example.com', 443, 1), lbEndpoint('b.example.com', 443, 3)], load_balancing_weight: { value: 4 } }],
      },
      circuit_breakers: { thresholds: [defaultThresholds] },
      metadata: meta('api.example.com', 'api.example.com', 'egress'),
    });
    // Without endpoints a DNS service resolves its own host name; LOGICAL_DNS takes one endpoint.
    const rr = clusters['outbound|80||rr.example.com'];
    expect(rr).to.include({ type: 'LOGICAL_DNS' });
    expect(rr.load_assignment).to.deep.equal({
      cluster_name: 'outbound|80||rr.example.com',
      endpoints: [{ locality: {}, lb_endpoints: [lbEndpoint('rr.example.com', 80, 1)], load_balancing_weight: { value: 1 } }],
    });
    const none = 'outbound|5432||db.example.com';
    expect(clusters[none]).to.deep.equal({
      name: none,
      type: 'ORIGINAL_DST',
      lb_policy: 'CLUSTER_PROVIDED',
      connect_timeout: { seconds: '10' },
      circuit_breakers: { thresholds: [defaultThresholds] },
      metadata: meta('db.example.com', 'db.example.com', 'egress'),
    });
  });

  it('adds PassthroughCluster, BlackHoleCluster, InboundPassthroughCluster and inbound clusters of its own services', () => {
    const push = pushOf(REVIEWS);
    const reviewsV1 = proxyOf('10.0.0.1', 'bookinfo', { app: 'reviews', version: 'v1' }, { INTERCEPTION_MODE: 'NONE' });
    const clusters = clustersOf(new SidecarGenerator({}), push, reviewsV1);
    const useDownstream = {
      'envoy.extensions.upstreams.http.v3.HttpProtocolOptions': {
        '@type': 'type.googleapis.com/envoy.extensions.upstreams.http.v3.HttpProtocolOptions',
        use_downstream_protocol_config: { http_protocol_options: {}, http2_protocol_options: {} },
      },
    };
    const passthrough = (name: string) => ({
      name,
      type: 'ORIGINAL_DST',
      lb_policy: 'CLUSTER_PROVIDED',
      connect_timeout: { seconds: '10' },
      circuit_breakers: { thresholds: [defaultThresholds] },
      typed_extension_protocol_options: useDownstream,
    });
    expect(clusters.PassthroughCluster).to.deep.equal(passthrough('PassthroughCluster'));
    expect(clusters.BlackHoleCluster).to.deep.equal({
      name: 'BlackHoleCluster',
      type: 'STATIC',
      connect_timeout: { seconds: '10' },
      load_assignment: { cluster_name: 'BlackHoleCluster' },
    });
    expect(clusters.InboundPassthroughCluster).to.deep.equal({
      ...passthrough('InboundPassthroughCluster'),
      upstream_bind_config: { source_address: { address: '127.0.0.6', port_value: 0 } },
    });
    // Service port 9080 → the application on 127.0.0.1:<target port 8080>.
    expect(clusters['inbound|9080||']).to.deep.equal({
      name: 'inbound|9080||',
      type: 'STATIC',
      connect_timeout: { seconds: '10' },
      load_assignment: {
        cluster_name: 'inbound|9080||',
        endpoints: [{ lb_endpoints: [{ endpoint: { address: { socket_address: { address: '127.0.0.1', port_value: 8080 } } } }] }],
      },
      circuit_breakers: { thresholds: [defaultThresholds] },
      metadata: meta('reviews.bookinfo.svc.cluster.local', 'reviews', 'bookinfo'),
    });
    expect(clusters['inbound|9090||']).to.have.nested.property('typed_extension_protocol_options');
    // A client has no inbound clusters.
    expect(Object.keys(clustersOf(new SidecarGenerator({}), push, client)).filter((n) => n.startsWith('inbound'))).to.deep.equal([]);
  });

  it('keeps to the hosts of a Sidecar egress listener', () => {
    const push = pushOf(`${REVIEWS}
${serviceEntryYaml('other', 'ratings', 'ratings.other.svc.cluster.local', 'STATIC', '{ number: 9080, name: http, protocol: HTTP }')}
${serviceEntryYaml('other', 'details', 'details.other.svc.cluster.local', 'STATIC', '{ number: 9080, name: http, protocol: HTTP }')}
---
apiVersion: networking.mesh.io/v1
kind: Sidecar
metadata: { name: default, namespace: bookinfo }
spec:
  egress:
  - hosts: ["./*", "other/ratings.other.svc.cluster.local"]
`);
    const names = Object.keys(clustersOf(new SidecarGenerator({}), push, client)).filter((n) => n.startsWith('outbound'));
    expect(names).to.deep.equal([
      'outbound|9080||ratings.other.svc.cluster.local',
      'outbound|9080||reviews.bookinfo.svc.cluster.local',
      'outbound|9090||reviews.bookinfo.svc.cluster.local',
    ]);
  });

  it('applies ClusterContributors to outbound and inbound clusters, and answers named requests', () => {
    const seen: string[] = [];
    const contributor: ClusterContributor = {
      patchCluster(cluster, context) {
        seen.push(`${cluster.name}@${context.service.hostname}:${context.port.number}/${context.subset}`);
        cluster.alt_stat_name = `patched-${context.subset || 'default'}`;
      },
    };
    const push = pushOf(REVIEWS + REVIEWS_DR);
    const proxy = proxyOf('10.0.0.1', 'bookinfo', { app: 'reviews', version: 'v1' });
    const names = ['outbound|9080|v1|reviews.bookinfo.svc.cluster.local', 'inbound|9080||', 'BlackHoleCluster', 'unknown'];
    const clusters = clustersOf(new SidecarGenerator({ clusters: [contributor] }), push, proxy, names);
    expect(Object.keys(clusters)).to.have.members(names.slice(0, 3));
    expect(clusters[names[0]].alt_stat_name).to.equal('patched-v1');
    expect(clusters['inbound|9080||'].alt_stat_name).to.equal('patched-default');
    expect(clusters.BlackHoleCluster).to.not.have.property('alt_stat_name');
    expect(seen).to.include('outbound|9080|v2|reviews.bookinfo.svc.cluster.local@reviews.bookinfo.svc.cluster.local:9080/v2');
  });

  it('shares encoded clusters between proxies of the same scope within a push', () => {
    const push = pushOf(REVIEWS + REVIEWS_DR);
    const gen = new SidecarGenerator({});
    const a = gen.generate({ proxy: proxyOf('10.0.5.1', 'bookinfo', {}), push, typeUrl: TypeUrl.Cluster, names: undefined });
    const b = gen.generate({ proxy: proxyOf('10.0.5.2', 'bookinfo', {}), push, typeUrl: TypeUrl.Cluster, names: undefined });
    expect(a[0].name).to.equal(b[0].name);
    expect(a[0].body).to.equal(b[0].body); // the same Buffer, encoded once
  });

  it('restricts clusters to what gRPC accepts when forGrpc is set', () => {
    const rule = reviewsRule(`
  host: reviews
  trafficPolicy: { loadBalancer: { simple: LEAST_REQUEST } }
  subsets:
  - name: v2
    labels: { version: v2 }
    trafficPolicy: { loadBalancer: { consistentHash: { httpHeaderName: x-user, maglev: {} } } }`);
    const push = pushOf(REVIEWS + serviceEntryYaml('egress', 'external', 'api.example.com', 'DNS', '{ number: 443, name: grpc, protocol: GRPC }') + rule);
    const reviews = push.service('reviews.bookinfo.svc.cluster.local')!;
    const built = buildOutboundClusters(push, client, reviews, reviews.ports[1], { forGrpc: true });
    const decoded = built.map((c) => roundTrip(TypeUrl.Cluster, c));
    expect(decoded.map((c) => [c.name, c.type, c.lb_policy])).to.deep.equal([
      ['outbound|9090||reviews.bookinfo.svc.cluster.local', 'EDS', 'ROUND_ROBIN'],
      ['outbound|9090|v2|reviews.bookinfo.svc.cluster.local', 'EDS', 'RING_HASH'],
    ]);
    const external = push.service('api.example.com')!;
    const [dns] = buildOutboundClusters(push, client, external, external.ports[0], { forGrpc: true });
    expect(roundTrip(TypeUrl.Cluster, dns)).to.include({ type: 'EDS' });
  });
});
