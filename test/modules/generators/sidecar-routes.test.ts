import { expect } from 'chai';
import { buildVirtualHost } from '../../../src/modules/generators/common';
import { SidecarGenerator } from '../../../src/modules/generators/sidecar';
import { Proxy } from '../../../src/modules/model';
import { decodeMessage } from '../../../src/modules/envoy/protos';
import { TypeUrl } from '../../../src/modules/envoy/type-urls';
import { million, roundTrip, routesOf, VirtualHost, vhostsOf } from '../../helpers/envoy';
import { missCountingCache, proxyOf, pushOf, serviceEntryYaml } from '../../helpers/push';
import { PushContext } from '../../../src/modules/model';
import { CachedType, XdsCache } from '../../../src/modules/model/xds-cache';
import * as interningModule from '../../../src/modules/model/body-interning';

/** The module's exports as the compiled generators read them on each call: replaceable, for a spy. */
const interning = interningModule as unknown as { internBody: typeof interningModule.internBody };

const defaultRetry = {
  retry_on: 'connect-failure,refused-stream,unavailable,cancelled,retriable-status-codes',
  num_retries: { value: 2 },
  retriable_status_codes: [503],
  retry_host_predicate: [
    { name: 'envoy.retry_host_predicates.previous_hosts', typed_config: { '@type': 'type.googleapis.com/envoy.extensions.retry.host.previous_hosts.v3.PreviousHostsPredicate' } },
  ],
  host_selection_retry_max_attempts: '5',
};
const noTimeout = { seconds: '0' };
const allowAny = {
  name: 'allow_any',
  domains: ['*'],
  routes: [{ name: 'allow_any', match: { prefix: '/' }, route: { cluster: 'PassthroughCluster', timeout: noTimeout } }],
};

const SERVICES = `
apiVersion: networking.mesh.io/v1
kind: ServiceEntry
metadata: { name: reviews, namespace: bookinfo }
spec:
  hosts: [reviews.bookinfo.svc.cluster.local]
  location: MESH_INTERNAL
  resolution: STATIC
  ports: [{ number: 9080, name: http, protocol: HTTP }]
---
apiVersion: networking.mesh.io/v1
kind: ServiceEntry
metadata: { name: ratings, namespace: bookinfo }
spec:
  hosts: [ratings.bookinfo.svc.cluster.local]
  location: MESH_INTERNAL
  resolution: STATIC
  ports:
  - { number: 9080, name: http, protocol: HTTP }
  - { number: 8080, name: http-alt, protocol: HTTP }
${serviceEntryYaml('bookinfo', 'mysql', 'mysql.bookinfo.svc.cluster.local', 'STATIC', '{ number: 9080, name: tcp, protocol: TCP }')}`;

/** The DestinationRule `reviews` in bookinfo, load balancing by `consistentHash` (a YAML flow mapping). */
const reviewsHashRule = (consistentHash: string) => `
---
apiVersion: networking.mesh.io/v1
kind: DestinationRule
metadata: { name: reviews, namespace: bookinfo }
spec:
  host: reviews
  trafficPolicy: { loadBalancer: { consistentHash: ${consistentHash} } }
`;

/** The VirtualService `reviews` in bookinfo, with `http` (YAML lines) as its rules. */
const reviewsVirtualService = (http: string) => `
---
apiVersion: networking.mesh.io/v1
kind: VirtualService
metadata: { name: reviews, namespace: bookinfo }
spec:
  hosts: [reviews]
  http:${http}
`;

const REVIEWS_VS = reviewsVirtualService(`
  - name: jason
    match:
    - name: by-header
      headers: { end-user: { exact: jason } }
      uri: { prefix: /reviews }
      ignoreUriCase: true
    - name: other-port
      port: 9999
      uri: { exact: /never }
    route:
    - destination: { host: reviews, subset: v2 }
    timeout: 5s
    retries: { attempts: 3, perTryTimeout: 2s, retryOn: "gateway-error,503" }
    fault:
      delay: { fixedDelay: 1500ms, percentage: { value: 10 } }
      abort: { grpcStatus: UNAVAILABLE, percentage: { value: 0.5 } }
    headers:
      request: { set: { x-a: "1" }, add: { x-b: "2" }, remove: [x-c] }
      response: { remove: [server] }
  - name: split
    match:
    - uri: { regex: "^/api/v[0-9]+/.*" }
      method: { exact: GET }
      authority: { prefix: reviews }
      queryParams: { debug: { exact: "1" } }
      withoutHeaders: { x-skip: { exact: "yes" } }
    route:
    - destination: { host: reviews, subset: v1 }
      weight: 75
      headers: { request: { set: { x-subset: v1 } } }
    - destination: { host: reviews, subset: v2 }
      weight: 25
    rewrite: { uri: /v2/, authority: reviews.internal }
    mirror: { host: ratings.bookinfo.svc.cluster.local, port: { number: 8080 } }
    mirrorPercentage: { value: 50 }
    corsPolicy:
      allowOrigins: [{ exact: "https://a.example.com" }]
      allowMethods: [GET, POST]
      maxAge: 24h
      allowCredentials: true
  - name: old
    match: [{ uri: { prefix: /old } }]
    redirect: { uri: /new, authority: new.example.com, redirectCode: 302 }
  - name: teapot
    match: [{ uri: { exact: /teapot } }]
    directResponse: { status: 418, body: { string: short and stout } }
  - name: regex-rewrite
    match: [{ uri: { prefix: /rr } }]
    route: [{ destination: { host: reviews } }]
    rewrite: { uriRegexRewrite: { match: "^/rr/(.*)$", rewrite: "/\\\\1" } }
    retries: { attempts: 0 }
  - route: [{ destination: { host: ratings } }]
  - name: unreachable
    route: [{ destination: { host: reviews } }]`);

describe('sidecar generator: RDS', () => {
  const client = proxyOf('10.0.9.9', 'bookinfo', { app: 'productpage' });

  it('routes a service without VirtualService to its default cluster, and anything else to PassthroughCluster', () => {
    const routes = routesOf(new SidecarGenerator({}), pushOf(SERVICES), client, ['9080']);
    // Each bookinfo host on 9080, seen from bookinfo: every name it goes by, one default route.
    const defaultVhost = (name: string) => {
      const fqdn = `${name}.bookinfo.svc.cluster.local`;
      return {
        name: `${fqdn}:9080`,
        domains: [fqdn, `${fqdn}.`, name, `${name}.bookinfo`, `${name}.bookinfo.svc`].flatMap((d) => [d, `${d}:9080`]),
        routes: [{ name: 'default', match: { prefix: '/' }, route: { cluster: `outbound|9080||${fqdn}`, timeout: noTimeout, retry_policy: defaultRetry } }],
      };
    };
    expect(routes['9080']).to.deep.equal({
      name: '9080',
      validate_clusters: { value: false },
      virtual_hosts: [defaultVhost('ratings'), defaultVhost('reviews'), allowAny],
    });
  });

  it('translates VirtualService http rules: matches, weights, timeouts, retries, rewrites, faults, redirects, headers, mirror, CORS', () => {
    const routes = routesOf(new SidecarGenerator({}), pushOf(SERVICES + REVIEWS_VS), client, ['9080']);
    const reviews = vhostsOf(routes['9080'])['reviews.bookinfo.svc.cluster.local:9080'];
    const [jason, split, old, teapot, regexRewrite, rest, ...others] = reviews.routes;
    expect(others).to.deep.equal([]); // the rule after the catch-all is unreachable
    expect(jason).to.deep.equal({
      name: 'jason.by-header',
      match: { prefix: '/reviews', case_sensitive: { value: false }, headers: [{ name: 'end-user', string_match: { exact: 'jason' } }] },
      route: {
        cluster: 'outbound|9080|v2|reviews.bookinfo.svc.cluster.local',
        timeout: { seconds: '5' },
        retry_policy: {
          ...defaultRetry,
          retry_on: 'gateway-error,retriable-status-codes',
          num_retries: { value: 3 },
          per_try_timeout: { seconds: '2' },
          retriable_status_codes: [503],
        },
      },
      request_headers_to_add: [
        { header: { key: 'x-a', value: '1' }, append_action: 'OVERWRITE_IF_EXISTS_OR_ADD' },
        { header: { key: 'x-b', value: '2' }, append_action: 'APPEND_IF_EXISTS_OR_ADD' },
      ],
      request_headers_to_remove: ['x-c'],
      response_headers_to_remove: ['server'],
      typed_per_filter_config: {
        'envoy.filters.http.fault': {
          '@type': 'type.googleapis.com/envoy.extensions.filters.http.fault.v3.HTTPFault',
          delay: { fixed_delay: { seconds: '1', nanos: 500000000 }, percentage: million(100000) },
          abort: { grpc_status: 14, percentage: million(5000) },
        },
      },
    });
    expect(split).to.deep.equal({
      name: 'split',
      match: {
        safe_regex: { regex: '^/api/v[0-9]+/.*' },
        headers: [
          { name: 'x-skip', string_match: { exact: 'yes' }, invert_match: true },
          { name: ':method', string_match: { exact: 'GET' } },
          { name: ':authority', string_match: { prefix: 'reviews' } },
        ],
        query_parameters: [{ name: 'debug', string_match: { exact: '1' } }],
      },
      route: {
        weighted_clusters: {
          clusters: [
            {
              name: 'outbound|9080|v1|reviews.bookinfo.svc.cluster.local',
              weight: { value: 75 },
              request_headers_to_add: [{ header: { key: 'x-subset', value: 'v1' }, append_action: 'OVERWRITE_IF_EXISTS_OR_ADD' }],
            },
            { name: 'outbound|9080|v2|reviews.bookinfo.svc.cluster.local', weight: { value: 25 } },
          ],
        },
        timeout: noTimeout,
        retry_policy: defaultRetry,
        prefix_rewrite: '/v2/',
        host_rewrite_literal: 'reviews.internal',
        request_mirror_policies: [{ cluster: 'outbound|8080||ratings.bookinfo.svc.cluster.local', runtime_fraction: { default_value: million(500000) } }],
      },
      typed_per_filter_config: {
        'envoy.filters.http.cors': {
          '@type': 'type.googleapis.com/envoy.extensions.filters.http.cors.v3.CorsPolicy',
          allow_origin_string_match: [{ exact: 'https://a.example.com' }],
          allow_methods: 'GET,POST',
          max_age: '86400',
          allow_credentials: { value: true },
        },
      },
    });
    expect(old).to.deep.equal({ name: 'old', match: { prefix: '/old' }, redirect: { path_redirect: '/new', host_redirect: 'new.example.com', response_code: 'FOUND' } });
    expect(teapot).to.deep.equal({ name: 'teapot', match: { path: '/teapot' }, direct_response: { status: 418, body: { inline_string: 'short and stout' } } });
    // attempts: 0 turns retries off.
    expect(regexRewrite).to.deep.equal({
      name: 'regex-rewrite',
      match: { prefix: '/rr' },
      route: {
        cluster: 'outbound|9080||reviews.bookinfo.svc.cluster.local',
        timeout: noTimeout,
        regex_rewrite: { pattern: { regex: '^/rr/(.*)$' }, substitution: '/\\1' },
      },
    });
    // ratings has two ports: the destination keeps the route's port.
    expect(rest).to.deep.equal({
      match: { prefix: '/' },
      route: { cluster: 'outbound|9080||ratings.bookinfo.svc.cluster.local', timeout: noTimeout, retry_policy: defaultRetry },
    });
  });

  it('uses the default route where no VirtualService rule applies (other ports, other sources)', () => {
    const push = pushOf(`${SERVICES}
---
apiVersion: networking.mesh.io/v1
kind: VirtualService
metadata: { name: ratings, namespace: bookinfo }
spec:
  hosts: [ratings.bookinfo.svc.cluster.local]
  http:
  - match: [{ port: 8080, uri: { prefix: /a } }]
    route: [{ destination: { host: ratings, port: { number: 8080 } } }]
  - match: [{ sourceLabels: { app: reviews } }]
    route: [{ destination: { host: reviews } }]
`);
    const gen = new SidecarGenerator({});
    const at9080 = vhostsOf(routesOf(gen, push, client, ['9080'])['9080'])['ratings.bookinfo.svc.cluster.local:9080'];
    expect(at9080.routes.map((r) => r.name)).to.deep.equal(['default']);
    const at8080 = vhostsOf(routesOf(gen, push, client, ['8080'])['8080'])['ratings.bookinfo.svc.cluster.local:8080'];
    expect(at8080.routes.map((r) => (r.route as { cluster: string }).cluster)).to.deep.equal(['outbound|8080||ratings.bookinfo.svc.cluster.local']);
    const fromReviews = proxyOf('10.0.0.5', 'bookinfo', { app: 'reviews' });
    const at9080r = vhostsOf(routesOf(gen, push, fromReviews, ['9080'])['9080'])['ratings.bookinfo.svc.cluster.local:9080'];
    expect(at9080r.routes.map((r) => (r.route as { cluster: string }).cluster)).to.deep.equal(['outbound|9080||reviews.bookinfo.svc.cluster.local']);
  });

  it('adds hash policies for consistent hashing, and retries then stay on the same host', () => {
    const push = pushOf(SERVICES + reviewsHashRule('{ httpCookie: { name: session, ttl: 60s } }'));
    const reviews = vhostsOf(routesOf(new SidecarGenerator({}), push, client, ['9080'])['9080'])['reviews.bookinfo.svc.cluster.local:9080'];
    const { retry_host_predicate: _dropped, ...retry } = defaultRetry;
    expect(reviews.routes[0].route).to.deep.equal({
      cluster: 'outbound|9080||reviews.bookinfo.svc.cluster.local',
      timeout: noTimeout,
      retry_policy: retry,
      hash_policy: [{ cookie: { name: 'session', ttl: { seconds: '60' } } }],
    });
  });

  it('follows the scope: other namespaces get no short names, REGISTRY_ONLY blocks, and the FQDN option', () => {
    const push = pushOf(`${SERVICES}
${serviceEntryYaml('bookinfo', 'clash', 'reviews.bookinfo', 'STATIC', '{ number: 9080, name: http, protocol: HTTP }')}
---
apiVersion: networking.mesh.io/v1
kind: Sidecar
metadata: { name: default, namespace: other }
spec:
  egress: [{ hosts: ["bookinfo/*"] }]
  outboundTrafficPolicy: { mode: REGISTRY_ONLY }
`);
    const elsewhere = proxyOf('10.2.0.1', 'other', {});
    const config = routesOf(new SidecarGenerator({ absoluteFqdnDomain: false }), push, elsewhere);
    expect(Object.keys(config)).to.deep.equal(['8080', '9080']);
    const vhosts = config['9080'].virtual_hosts as VirtualHost[];
    expect(vhosts.map((v) => v.name)).to.deep.equal([
      'ratings.bookinfo.svc.cluster.local:9080',
      'reviews.bookinfo:9080',
      'reviews.bookinfo.svc.cluster.local:9080',
      'block_all',
    ]);
    // `reviews.bookinfo` belongs to the ServiceEntry of that name, so the other host loses that short form.
    expect(vhosts[2].domains).to.deep.equal([
      'reviews.bookinfo.svc.cluster.local', 'reviews.bookinfo.svc.cluster.local:9080', 'reviews.bookinfo.svc', 'reviews.bookinfo.svc:9080',
    ]);
    const blockAll = { name: 'block_all', domains: ['*'], routes: [{ name: 'block_all', match: { prefix: '/' }, direct_response: { status: 502 } }] };
    expect(vhosts[3]).to.deep.equal(blockAll);
    // Without capture, a listener cannot pass through to an original destination (it would be itself).
    const uncaptured = routesOf(new SidecarGenerator({}), push, proxyOf('10.0.9.9', 'bookinfo', {}, { INTERCEPTION_MODE: 'NONE' }), ['9080'])['9080'];
    expect((uncaptured.virtual_hosts as VirtualHost[]).at(-1)).to.deep.equal(blockAll);
  });

  it('builds gRPC virtual hosts: route actions only, stream duration for timeouts, gRPC retry codes', () => {
    const push = pushOf(SERVICES + REVIEWS_VS);
    const reviews = push.service('reviews.bookinfo.svc.cluster.local')!;
    const vh = buildVirtualHost(push, client, reviews, reviews.ports[0], { forGrpc: true });
    const decoded = roundTrip(TypeUrl.RouteConfiguration, { name: 'x', virtual_hosts: [vh] });
    const [host] = decoded.virtual_hosts as VirtualHost[];
    expect(host.domains).to.deep.equal(['reviews.bookinfo.svc.cluster.local', 'reviews.bookinfo.svc.cluster.local:9080']);
    expect(host.routes.map((r) => r.name ?? '')).to.deep.equal(['jason.by-header', 'split', 'regex-rewrite', '']);
    const [jason, split, regexRewrite, rest] = host.routes;
    // gateway-error and 503 are no gRPC status codes: no retries.
    expect(jason.route).to.deep.equal({ cluster: 'outbound|9080|v2|reviews.bookinfo.svc.cluster.local', max_stream_duration: { max_stream_duration: { seconds: '5' } } });
    expect(jason).to.have.nested.property('typed_per_filter_config.envoy\\.filters\\.http\\.fault');
    expect(split.route).to.deep.equal({
      weighted_clusters: {
        clusters: [
          { name: 'outbound|9080|v1|reviews.bookinfo.svc.cluster.local', weight: { value: 75 } },
          { name: 'outbound|9080|v2|reviews.bookinfo.svc.cluster.local', weight: { value: 25 } },
        ],
      },
      retry_policy: { retry_on: 'unavailable,cancelled', num_retries: { value: 2 } },
    });
    expect(split).to.not.have.property('typed_per_filter_config');
    expect(regexRewrite.route).to.deep.equal({ cluster: 'outbound|9080||reviews.bookinfo.svc.cluster.local' });
    expect(rest.route).to.deep.equal({ cluster: 'outbound|9080||ratings.bookinfo.svc.cluster.local', retry_policy: { retry_on: 'unavailable,cancelled', num_retries: { value: 2 } } });
  });

  it('shares encoded route tables within a scope and tells scopes with label-dependent rules apart', () => {
    const push = pushOf(SERVICES + REVIEWS_VS);
    const gen = new SidecarGenerator({});
    const [a] = gen.generate({ proxy: client, push, typeUrl: TypeUrl.RouteConfiguration, names: ['9080'] });
    const [b] = gen.generate({ proxy: proxyOf('10.0.9.8', 'bookinfo', { app: 'other' }), push, typeUrl: TypeUrl.RouteConfiguration, names: ['9080'] });
    expect(a.body).to.equal(b.body);
    expect(gen.generate({ proxy: client, push, typeUrl: TypeUrl.RouteConfiguration, names: ['not-a-port'] })).to.deep.equal([]);

    // With a sourceLabels match, the labels are part of the key.
    const bySource = pushOf(SERVICES + reviewsVirtualService(`
  - match: [{ sourceLabels: { app: productpage } }]
    route: [{ destination: { host: reviews, subset: v2 } }]
  - route: [{ destination: { host: reviews, subset: v1 } }]`));
    const body = (p: Proxy) => gen.generate({ proxy: p, push: bySource, typeUrl: TypeUrl.RouteConfiguration, names: ['9080'] })[0].body;
    const productpage = body(client);
    expect(body(proxyOf('10.0.9.7', 'bookinfo', { app: 'productpage' }))).to.equal(productpage);
    const other = body(proxyOf('10.0.9.6', 'bookinfo', { app: 'other' }));
    expect(other).to.not.equal(productpage);
    const clusterOf = (buf: Buffer) => {
      const vh = vhostsOf(decodeMessage(TypeUrl.RouteConfiguration, buf))['reviews.bookinfo.svc.cluster.local:9080'];
      return (vh.routes[0].route as { cluster: string }).cluster;
    };
    expect(clusterOf(productpage)).to.equal('outbound|9080|v2|reviews.bookinfo.svc.cluster.local');
    expect(clusterOf(other)).to.equal('outbound|9080|v1|reviews.bookinfo.svc.cluster.local');
  });

  it('builds a default virtual host once for every other namespace, apart for its own and for a namespace that sees another DestinationRule', () => {
    const yaml = `${SERVICES}
---
apiVersion: networking.mesh.io/v1
kind: DestinationRule
metadata: { name: sticky-reviews, namespace: team-b }
spec:
  host: reviews.bookinfo.svc.cluster.local
  exportTo: ["."]
  trafficPolicy: { loadBalancer: { consistentHash: { httpHeaderName: x-user } } }
`;
    const { cache, misses } = missCountingCache(['rds']);
    const push = pushOf(yaml, '1', cache);
    const gen = new SidecarGenerator({});
    const table = (namespace: string, ip: string) => {
      const [rds] = gen.generate({ proxy: proxyOf(ip, namespace), push, typeUrl: TypeUrl.RouteConfiguration, names: ['9080'] });
      return vhostsOf(decodeMessage(TypeUrl.RouteConfiguration, rds.body));
    };
    const reviews = 'reviews.bookinfo.svc.cluster.local:9080';
    const first = table('team-a', '10.3.0.1');
    const afterFirst = misses();
    const again = table('team-c', '10.3.0.2');
    // Another namespace: its route table is its own, but both default virtual hosts are found built.
    expect(misses() - afterFirst, 'team-c builds only its route table').to.equal(1);
    expect(again).to.deep.equal(first);
    expect(first[reviews].domains).to.not.include('reviews');
    expect(first[reviews].routes[0].route).to.not.have.property('hash_policy');

    // The service's own namespace reaches it by its short name too.
    const own = table('bookinfo', '10.3.0.3');
    expect(own[reviews].domains).to.include.members(['reviews', 'reviews:9080']);
    // A namespace that sees a DestinationRule of its own gets that rule's hash policy, and no one else does.
    const sticky = table('team-b', '10.3.0.4');
    expect(sticky[reviews].routes[0].route).to.have.deep.property('hash_policy', [{ header: { header_name: 'x-user' } }]);
    expect(sticky[reviews].domains).to.deep.equal(first[reviews].domains);
    expect(table('team-d', '10.3.0.5')[reviews].routes[0].route).to.not.have.property('hash_policy');

    // A change to the DestinationRules rebuilds the shared host (the cache's kind tag).
    cache.invalidate(['kind:DestinationRule']);
    const changed = pushOf(yaml.replace('httpHeaderName: x-user', 'httpHeaderName: x-tenant'), '1', cache);
    const [rds] = gen.generate({ proxy: proxyOf('10.3.0.4', 'team-b'), push: changed, typeUrl: TypeUrl.RouteConfiguration, names: ['9080'] });
    expect(vhostsOf(decodeMessage(TypeUrl.RouteConfiguration, rds.body))[reviews].routes[0].route).to.have.deep.property('hash_policy', [{ header: { header_name: 'x-tenant' } }]);
  });

  it('keeps a route table its change left the same (another port of a service changed), and assembles one whose host changed', () => {
    /** The route tables the generator keeps in the cache, by their key's last part (the route name). */
    class RecordingCache extends XdsCache {
      readonly tables = new Map<string, unknown>();
      override get<T>(type: CachedType, key: string, tags: readonly string[] | (() => readonly string[]), build: (previous: T | undefined) => T, keepPrevious?: boolean): T {
        const value = super.get(type, key, tags, build, keepPrevious);
        if (type === 'rds' && !key.includes('/vh')) this.tables.set(key.slice(key.lastIndexOf('/') + 1), value);
        return value;
      }
    }
    const cache = new RecordingCache({ maxEntries: 1000, types: new Set(['rds']) });
    const pushWith = (yaml: string) => pushOf(yaml, '1', cache);
    const gen = new SidecarGenerator({});
    // Every assembled table is interned: counting those calls counts assemblies.
    const assembled: string[] = [];
    const intern = interning.internBody;
    const tables = (push: PushContext) => {
      interning.internBody = (typeUrl, name, body) => {
        if (typeUrl === TypeUrl.RouteConfiguration) assembled.push(name);
        return intern(typeUrl, name, body);
      };
      try {
        return Object.fromEntries(gen.generate({ proxy: client, push, typeUrl: TypeUrl.RouteConfiguration, names: ['9080', '8080'] }).map((r) => [r.name, r.body]));
      } finally {
        interning.internBody = intern;
      }
    };
    const before = tables(pushWith(SERVICES));
    expect(assembled).to.deep.equal(['9080', '8080']);
    const kept9080 = cache.tables.get('9080');
    const kept8080 = cache.tables.get('8080');

    // ratings gains a port: every route table is evicted, and its hosts on 9080 and 8080 come out as before.
    cache.invalidate(['services', 'host:ratings.bookinfo.svc.cluster.local', 'kind:ServiceEntry']);
    const morePorts = SERVICES.replace('  - { number: 8080, name: http-alt, protocol: HTTP }', '  - { number: 8080, name: http-alt, protocol: HTTP }\n  - { number: 7070, name: http-new, protocol: HTTP }');
    const after = tables(pushWith(morePorts));
    expect(assembled.slice(2), 'neither: every host came out as before').to.deep.equal([]);
    expect(cache.tables.get('9080'), '9080: the table it replaces').to.equal(kept9080);
    expect(after['9080']).to.equal(before['9080']);
    expect(cache.tables.get('8080')).to.equal(kept8080);

    // reviews' 9080 host changes (a hash policy): that table is assembled again, with it.
    cache.invalidate(['kind:DestinationRule', 'host:reviews.bookinfo.svc.cluster.local']);
    const sticky = tables(pushWith(morePorts + reviewsHashRule('{ useSourceIp: true }')));
    expect(assembled.slice(2), 'reviews is on 9080 only').to.deep.equal(['9080']);
    expect(cache.tables.get('9080')).to.not.equal(kept9080);
    const reviews = vhostsOf(decodeMessage(TypeUrl.RouteConfiguration, sticky['9080']))['reviews.bookinfo.svc.cluster.local:9080'];
    expect(reviews.routes[0].route).to.have.deep.property('hash_policy', [{ connection_properties: { source_ip: true } }]);
    expect(sticky['8080']).to.equal(before['8080']);
  });
});
