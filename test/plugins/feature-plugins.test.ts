import { expect } from 'chai';
import { createContainer } from '../../src/container';
import { XdsGenerators } from '../../src/modules/generators';
import { Proxy, PushContext } from '../../src/modules/model';
import { TypeUrl } from '../../src/modules/envoy/type-urls';
import {
  decodedOf, filterNames as names, hcmOf, httpFilterNames, inboundFilters as inbound, Obj, outboundFilters as outbound, serviceStruct, str, tcpProxy,
} from '../helpers/envoy';
import { proxyOf, pushOf } from '../helpers/push';
import { REPO_ROOT, runCli } from '../helpers/run-cli';

/** Every built-in plugin's setting, off; tests turn one (or all) on. */
const ALL_OFF: Record<string, string> = {
  PILOT_ENABLE_METADATA_EXCHANGE: 'false',
  PILOT_ENABLE_ALPN_FILTER: 'false',
  PILOT_ENABLE_SQLDB_FILTER: 'false',
  PILOT_ENABLE_DOCDB_FILTER: 'false',
  PILOT_ENABLE_KVSTORE_FILTER: 'false',
  PILOT_ENABLE_TELEMETRY_LABEL: 'false',
  PILOT_ENDPOINT_TELEMETRY_LABEL: 'false',
  PILOT_HTTP10: 'false',
  PILOT_SIDECAR_USE_REMOTE_ADDRESS: 'false',
};
const ALL_ON: Record<string, string> = Object.fromEntries(Object.keys(ALL_OFF).map((k) => [k, 'true']));

interface Generated {
  listeners: Record<string, Obj>;
  clusters: Record<string, Obj>;
  endpoints(name: string): Obj;
}

/** LDS, CDS and EDS for `proxy` from the Envoy generator composed by the container for `env`. */
function generate(env: Record<string, string>, push: PushContext, proxy: Proxy): Generated {
  const { container } = createContainer({ program: 'pilot-discovery', env, cwd: REPO_ROOT });
  const gen = container.get(XdsGenerators).byName.get('')!;
  return {
    listeners: decodedOf<Obj>(gen, TypeUrl.Listener, push, proxy),
    clusters: decodedOf<Obj>(gen, TypeUrl.Cluster, push, proxy),
    endpoints(name) {
      const cla = decodedOf<Obj>(gen, TypeUrl.ClusterLoadAssignment, push, proxy, [name])[name];
      expect(cla, name).to.not.equal(undefined);
      return cla;
    },
  };
}

const TCP_PROXY = 'envoy.filters.network.tcp_proxy';
const MX = 'mesh.metadata_exchange';
const ALPN = 'mesh.alpn';
const MYSQL = 'envoy.filters.network.mysql_proxy';
const MONGO = 'envoy.filters.network.mongo_proxy';
const REDIS = 'envoy.filters.network.redis_proxy';
const HTTP_TAIL = ['envoy.filters.http.cors', 'envoy.filters.http.fault', 'envoy.filters.http.router'];
const INBOUND_HTTP_TAIL = ['envoy.filters.http.router'];

/** A workload (10.0.0.5, the proxy under test) serving one port of each protocol. */
const DB = `
apiVersion: networking.mesh.io/v1
kind: ServiceEntry
metadata: { name: db, namespace: foo }
spec:
  hosts: [db.foo.svc.cluster.local]
  location: MESH_INTERNAL
  resolution: STATIC
  ports:
  - { number: 8080, name: http, protocol: HTTP }
  - { number: 9000, name: tcp, protocol: TCP }
  - { number: 3306, name: mysql, protocol: MYSQL }
  - { number: 6379, name: redis, protocol: REDIS }
  - { number: 27017, name: mongo, protocol: MONGO }
  workloadSelector: { labels: { app: db } }
---
apiVersion: networking.mesh.io/v1
kind: WorkloadEntry
metadata: { name: db-1, namespace: foo }
spec: { address: 10.0.0.5, labels: { app: db, version: v1 } }
`;

const OUT = (port: number) => `outbound|${port}||db.foo.svc.cluster.local`;
const IN = (port: number) => `inbound|${port}||`;

describe('built-in feature plugins (through the container)', () => {
  const push = pushOf(DB);
  const proxy = proxyOf('10.0.0.5', 'foo', { app: 'db' }, { INTERCEPTION_MODE: 'REDIRECT' });

  /** The "off" case of a database filter plugin: `port` gets metadata exchange and tcp_proxy only, both ways. */
  const itLeavesPlainTcpProxy = (setting: string, protocol: string, port: number) =>
    it(`off: plain tcp_proxy on ${protocol} ports`, () => {
      const g = generate({ ...ALL_ON, [setting]: 'false' }, push, proxy);
      expect(names(outbound(g, port))).to.deep.equal([MX, TCP_PROXY]);
      expect(names(inbound(g, port))).to.deep.equal([MX, TCP_PROXY]);
    });

  it('with every plugin off, chains carry only the mesh’s own filters', () => {
    const g = generate(ALL_OFF, push, proxy);
    for (const port of [9000, 3306, 6379, 27017]) {
      expect(names(outbound(g, port)), `outbound ${port}`).to.deep.equal([TCP_PROXY]);
      expect(names(inbound(g, port)), `inbound ${port}`).to.deep.equal([TCP_PROXY]);
    }
    expect(httpFilterNames(outbound(g, 8080))).to.deep.equal(HTTP_TAIL);
    expect(httpFilterNames(inbound(g, 8080))).to.deep.equal(INBOUND_HTTP_TAIL);
  });

  it('with every plugin on, contributions come in plugin order before the terminal filter', () => {
    const g = generate(ALL_ON, push, proxy);
    expect(names(outbound(g, 9000))).to.deep.equal([MX, TCP_PROXY]);
    expect(names(outbound(g, 3306))).to.deep.equal([MX, MYSQL, TCP_PROXY]);
    expect(names(outbound(g, 27017))).to.deep.equal([MX, MONGO, TCP_PROXY]);
    expect(names(outbound(g, 6379))).to.deep.equal([MX, REDIS]);
    expect(names(inbound(g, 6379))).to.deep.equal([MX, TCP_PROXY]);
    expect(httpFilterNames(outbound(g, 8080))).to.deep.equal([MX, ALPN, ...HTTP_TAIL]);
    expect(httpFilterNames(inbound(g, 8080))).to.deep.equal([MX, ...INBOUND_HTTP_TAIL]);
  });

  it('uses the settings’ defaults when the environment says nothing', () => {
    const { plugins } = createContainer({ program: 'pilot-discovery', env: {}, cwd: REPO_ROOT });
    expect(Object.fromEntries(plugins.map((p) => [p.name, p.enabled]))).to.deep.equal({
      'metadata-exchange': true,
      'alpn-filter': true,
      'sqldb-filter': false,
      'docdb-filter': true,
      'kvstore-filter': false,
      'telemetry-labels': true,
      'endpoint-telemetry-labels': true,
      http10: false,
      'sidecar-use-remote-address': false,
      'jwt-authn': true,
      rbac: true,
      'ext-authz': true,
    });
    expect(plugins.every((p) => p.source === 'built-in')).to.equal(true);
    const g = generate({}, push, proxy);
    expect(names(outbound(g, 27017))).to.deep.equal([MX, MONGO, TCP_PROXY]);
    expect(names(outbound(g, 6379))).to.deep.equal([MX, TCP_PROXY]);
    expect(httpFilterNames(outbound(g, 8080))).to.deep.equal([MX, ALPN, ...HTTP_TAIL]);
  });

  describe('alpn-filter (PILOT_ENABLE_ALPN_FILTER)', () => {
    it('on: mesh.alpn overrides the upstream ALPN on outbound HTTP, before CORS, fault and router', () => {
      const g = generate({ ...ALL_OFF, PILOT_ENABLE_ALPN_FILTER: 'true' }, push, proxy);
      const filters = hcmOf(outbound(g, 8080)).http_filters;
      expect(filters.map((f: Obj) => f.name)).to.deep.equal([ALPN, ...HTTP_TAIL]);
      expect(filters[0]).to.deep.equal({
        name: ALPN,
        is_optional: true,
        typed_config: {
          '@type': 'type.googleapis.com/mesh.filters.http.alpn.v1.FilterConfig',
          alpn_override: [
            { upstream_protocol: 'HTTP10', alpn_override: ['mesh-http/1.0', 'mesh', 'http/1.0'] },
            { upstream_protocol: 'HTTP11', alpn_override: ['mesh-http/1.1', 'mesh', 'http/1.1'] },
            { upstream_protocol: 'HTTP2', alpn_override: ['mesh-h2', 'mesh', 'h2'] },
          ],
        },
      });
      // Inbound HTTP and TCP chains are left alone.
      expect(httpFilterNames(inbound(g, 8080))).to.deep.equal(INBOUND_HTTP_TAIL);
      expect(names(outbound(g, 9000))).to.deep.equal([TCP_PROXY]);
    });

    it('off: no mesh.alpn', () => {
      const g = generate({ ...ALL_ON, PILOT_ENABLE_ALPN_FILTER: 'false' }, push, proxy);
      expect(httpFilterNames(outbound(g, 8080))).to.not.include(ALPN);
      expect(JSON.stringify(g.listeners)).to.not.include('mesh.filters.http.alpn');
    });
  });

  describe('metadata-exchange (PILOT_ENABLE_METADATA_EXCHANGE, PILOT_MX_ADDITIONAL_LABELS)', () => {
    const mx = (labels?: string[]) => ({
      '@type': 'type.googleapis.com/mesh.filters.network.metadata_exchange.v1.MetadataExchange',
      protocol: 'mesh-peer-exchange',
      ...(labels ? { additional_labels: labels } : {}),
    });

    it('on: first on every TCP chain, inbound and outbound, and in every HTTP connection manager', () => {
      const g = generate({ ...ALL_OFF, PILOT_ENABLE_METADATA_EXCHANGE: 'true', PILOT_MX_ADDITIONAL_LABELS: ' role, ,team,' }, push, proxy);
      for (const port of [9000, 3306, 6379, 27017]) {
        for (const filters of [outbound(g, port), inbound(g, port)]) {
          expect(names(filters), `port ${port}`).to.deep.equal([MX, TCP_PROXY]);
          expect(filters[0].typed_config).to.deep.equal(mx(['role', 'team']));
        }
      }
      for (const filters of [outbound(g, 8080), inbound(g, 8080)]) {
        const first = hcmOf(filters).http_filters[0];
        expect(first).to.deep.equal({ name: MX, typed_config: mx(['role', 'team']), is_optional: true });
      }
      expect(httpFilterNames(outbound(g, 8080))).to.deep.equal([MX, ...HTTP_TAIL]);
      expect(httpFilterNames(inbound(g, 8080))).to.deep.equal([MX, ...INBOUND_HTTP_TAIL]);
    });

    it('on without extra labels: no additional_labels', () => {
      const g = generate({ ...ALL_OFF, PILOT_ENABLE_METADATA_EXCHANGE: 'true' }, push, proxy);
      expect(outbound(g, 9000)[0].typed_config).to.deep.equal(mx());
      expect(hcmOf(inbound(g, 8080)).http_filters[0].typed_config).to.deep.equal(mx());
    });

    it('off: no metadata exchange anywhere', () => {
      const g = generate({ ...ALL_ON, PILOT_ENABLE_METADATA_EXCHANGE: 'false', PILOT_MX_ADDITIONAL_LABELS: 'role' }, push, proxy);
      expect(JSON.stringify(g.listeners)).to.not.include(MX);
      expect(names(outbound(g, 9000))).to.deep.equal([TCP_PROXY]);
      expect(names(inbound(g, 27017))).to.deep.equal([MONGO, TCP_PROXY]);
    });
  });

  describe('sqldb-filter (PILOT_ENABLE_SQLDB_FILTER)', () => {
    it('on: mysql_proxy before tcp_proxy on MYSQL ports, inbound and outbound', () => {
      const g = generate({ ...ALL_OFF, PILOT_ENABLE_SQLDB_FILTER: 'true' }, push, proxy);
      expect(outbound(g, 3306)).to.deep.equal([
        { name: MYSQL, typed_config: { '@type': 'type.googleapis.com/envoy.extensions.filters.network.mysql_proxy.v3.MySQLProxy', stat_prefix: OUT(3306) } },
        tcpProxy(OUT(3306)),
      ]);
      expect(names(inbound(g, 3306))).to.deep.equal([MYSQL, TCP_PROXY]);
      expect(inbound(g, 3306)[0].typed_config.stat_prefix).to.equal(IN(3306));
      for (const port of [9000, 6379, 27017]) expect(names(outbound(g, port)), `port ${port}`).to.deep.equal([TCP_PROXY]);
    });

    itLeavesPlainTcpProxy('PILOT_ENABLE_SQLDB_FILTER', 'MYSQL', 3306);
  });

  describe('docdb-filter (PILOT_ENABLE_DOCDB_FILTER)', () => {
    it('on: mongo_proxy before tcp_proxy on MONGO ports, inbound and outbound', () => {
      const g = generate({ ...ALL_OFF, PILOT_ENABLE_DOCDB_FILTER: 'true' }, push, proxy);
      expect(outbound(g, 27017)[0]).to.deep.equal({
        name: MONGO,
        typed_config: { '@type': 'type.googleapis.com/envoy.extensions.filters.network.mongo_proxy.v3.MongoProxy', stat_prefix: OUT(27017) },
      });
      expect(names(outbound(g, 27017))).to.deep.equal([MONGO, TCP_PROXY]);
      expect(names(inbound(g, 27017))).to.deep.equal([MONGO, TCP_PROXY]);
      for (const port of [9000, 3306, 6379]) expect(names(outbound(g, port)), `port ${port}`).to.deep.equal([TCP_PROXY]);
    });

    itLeavesPlainTcpProxy('PILOT_ENABLE_DOCDB_FILTER', 'MONGO', 27017);
  });

  describe('kvstore-filter (PILOT_ENABLE_KVSTORE_FILTER)', () => {
    it('on: redis_proxy replaces tcp_proxy on outbound REDIS ports, and REDIS clusters use MAGLEV', () => {
      const g = generate({ ...ALL_OFF, PILOT_ENABLE_KVSTORE_FILTER: 'true' }, push, proxy);
      expect(outbound(g, 6379)).to.deep.equal([
        {
          name: REDIS,
          typed_config: {
            '@type': 'type.googleapis.com/envoy.extensions.filters.network.redis_proxy.v3.RedisProxy',
            stat_prefix: OUT(6379),
            latency_in_micros: true,
            settings: { op_timeout: { seconds: '5' } },
            prefix_routes: { catch_all_route: { cluster: OUT(6379) } },
          },
        },
      ]);
      expect(names(inbound(g, 6379))).to.deep.equal([TCP_PROXY]);
      expect(names(outbound(g, 9000))).to.deep.equal([TCP_PROXY]);
      expect(g.clusters[OUT(6379)].lb_policy).to.equal('MAGLEV');
      expect(g.clusters[OUT(9000)].lb_policy).to.equal('LEAST_REQUEST');
      expect(g.clusters[IN(6379)].lb_policy).to.equal(undefined);
    });

    it('off: tcp_proxy and the default load balancer on REDIS ports', () => {
      const g = generate({ ...ALL_ON, PILOT_ENABLE_KVSTORE_FILTER: 'false' }, push, proxy);
      expect(names(outbound(g, 6379))).to.deep.equal([MX, TCP_PROXY]);
      expect(JSON.stringify(g.listeners)).to.not.include(REDIS);
      expect(g.clusters[OUT(6379)].lb_policy).to.equal('LEAST_REQUEST');
    });
  });

  describe('http10 (PILOT_HTTP10)', () => {
    it('on: outbound HTTP connection managers accept HTTP/1.0, inbound ones are unchanged', () => {
      const g = generate({ ...ALL_OFF, PILOT_HTTP10: 'true' }, push, proxy);
      expect(hcmOf(outbound(g, 8080)).http_protocol_options).to.deep.equal({ accept_http_10: true });
      expect(hcmOf(inbound(g, 8080))).to.not.have.property('http_protocol_options');
    });

    it('off: no http_protocol_options', () => {
      const g = generate({ ...ALL_ON, PILOT_HTTP10: 'false' }, push, proxy);
      expect(hcmOf(outbound(g, 8080))).to.not.have.property('http_protocol_options');
    });
  });

  describe('sidecar-use-remote-address (PILOT_SIDECAR_USE_REMOTE_ADDRESS)', () => {
    it('on: use_remote_address on outbound HTTP connection managers only', () => {
      const g = generate({ ...ALL_OFF, PILOT_SIDECAR_USE_REMOTE_ADDRESS: 'true' }, push, proxy);
      expect(hcmOf(outbound(g, 8080)).use_remote_address).to.deep.equal({ value: true });
      expect(hcmOf(inbound(g, 8080))).to.not.have.property('use_remote_address');
    });

    it('off: no use_remote_address', () => {
      const g = generate({ ...ALL_ON, PILOT_SIDECAR_USE_REMOTE_ADDRESS: 'false' }, push, proxy);
      expect(hcmOf(outbound(g, 8080))).to.not.have.property('use_remote_address');
    });
  });
});

/** DB plus a second service on the workload's TCP port, a subset, an inline endpoint and canonical labels. */
const TELEMETRY = `${DB}
---
apiVersion: networking.mesh.io/v1
kind: ServiceEntry
metadata: { name: db-alias, namespace: foo }
spec:
  hosts: [db-alias.foo.svc.cluster.local]
  location: MESH_INTERNAL
  resolution: STATIC
  ports:
  - { number: 9000, name: tcp, protocol: TCP }
  workloadSelector: { labels: { app: db } }
---
apiVersion: networking.mesh.io/v1
kind: WorkloadEntry
metadata: { name: db-2, namespace: foo }
spec:
  address: 10.0.0.6
  labels: { app: db, version: v2, service.mesh.io/canonical-name: database, service.mesh.io/canonical-revision: r7 }
---
apiVersion: networking.mesh.io/v1
kind: ServiceEntry
metadata: { name: legacy, namespace: foo }
spec:
  hosts: [legacy.foo.svc.cluster.local]
  location: MESH_INTERNAL
  resolution: STATIC
  ports:
  - { number: 7000, name: tcp, protocol: TCP }
  endpoints:
  - { address: 10.0.0.9 }
---
apiVersion: networking.mesh.io/v1
kind: DestinationRule
metadata: { name: db, namespace: foo }
spec:
  host: db.foo.svc.cluster.local
  subsets:
  - { name: v1, labels: { version: v1 } }
`;

const DB_SVC = serviceStruct('db.foo.svc.cluster.local', 'db', 'foo');
const ALIAS_SVC = serviceStruct('db-alias.foo.svc.cluster.local', 'db-alias', 'foo');
const servicesOf = (cluster: Obj) => cluster.metadata.filter_metadata.mesh.fields.services.list_value.values;

describe('telemetry plugins (through the container)', () => {
  const push = pushOf(TELEMETRY);
  const proxy = proxyOf('10.0.0.5', 'foo', { app: 'db' }, { INTERCEPTION_MODE: 'REDIRECT' });

  describe('telemetry-labels (PILOT_ENABLE_TELEMETRY_LABEL)', () => {
    it('on: an inbound cluster names every service of the workload on its port; outbound ones keep theirs, once', () => {
      const g = generate({ ...ALL_OFF, PILOT_ENABLE_TELEMETRY_LABEL: 'true' }, push, proxy);
      expect(servicesOf(g.clusters[IN(9000)])).to.deep.equal([ALIAS_SVC, DB_SVC]);
      expect(servicesOf(g.clusters[IN(8080)])).to.deep.equal([DB_SVC]);
      expect(servicesOf(g.clusters[OUT(9000)])).to.deep.equal([DB_SVC]);
      // What the builder put there stays.
      expect(g.clusters['outbound|9000|v1|db.foo.svc.cluster.local'].metadata.filter_metadata.mesh.fields).to.deep.equal({
        services: { list_value: { values: [DB_SVC] } },
        subset: str('v1'),
      });
    });

    it('off: an inbound cluster names only the service it was built for', () => {
      const g = generate({ ...ALL_ON, PILOT_ENABLE_TELEMETRY_LABEL: 'false' }, push, proxy);
      expect(servicesOf(g.clusters[IN(9000)])).to.deep.equal([ALIAS_SVC]);
    });
  });

  describe('endpoint-telemetry-labels (PILOT_ENDPOINT_TELEMETRY_LABEL)', () => {
    const workloads = (cla: Obj) =>
      cla.endpoints.flatMap((l: Obj) => l.lb_endpoints).map((e: Obj) => [e.endpoint.address.socket_address.address, e.metadata?.filter_metadata?.mesh?.fields?.workload]);

    it('on: workload;namespace;canonical service;revision;cluster on each endpoint', () => {
      const env = { ...ALL_OFF, PILOT_ENABLE_TELEMETRY_LABEL: 'true', PILOT_ENDPOINT_TELEMETRY_LABEL: 'true', CLUSTER_ID: 'east' };
      const g = generate(env, push, proxy);
      expect(workloads(g.endpoints(OUT(9000)))).to.deep.equal([
        ['10.0.0.5', str('db-1;foo;db;v1;east')],
        ['10.0.0.6', str('db-2;foo;database;r7;east')],
      ]);
      // An inline endpoint without labels: named after its ServiceEntry, no revision.
      expect(workloads(g.endpoints('outbound|7000||legacy.foo.svc.cluster.local'))).to.deep.equal([['10.0.0.9', str('legacy;foo;legacy;;east')]]);
      expect(workloads(g.endpoints('outbound|9000|v1|db.foo.svc.cluster.local'))).to.deep.equal([['10.0.0.5', str('db-1;foo;db;v1;east')]]);
    });

    it('off: no endpoint metadata', () => {
      const g = generate({ ...ALL_ON, PILOT_ENDPOINT_TELEMETRY_LABEL: 'false' }, push, proxy);
      expect(workloads(g.endpoints(OUT(9000)))).to.deep.equal([['10.0.0.5', undefined], ['10.0.0.6', undefined]]);
    });

    it('needs PILOT_ENABLE_TELEMETRY_LABEL as well, as with the incumbent', () => {
      const g = generate({ ...ALL_ON, PILOT_ENABLE_TELEMETRY_LABEL: 'false' }, push, proxy);
      expect(workloads(g.endpoints(OUT(9000)))).to.deep.equal([['10.0.0.5', undefined], ['10.0.0.6', undefined]]);
    });
  });
});

describe('meshctl experimental plugins lists the built-in plugins', () => {
  const BUILT_IN = [
    ['metadata-exchange', 'PILOT_ENABLE_METADATA_EXCHANGE', true],
    ['alpn-filter', 'PILOT_ENABLE_ALPN_FILTER', true],
    ['sqldb-filter', 'PILOT_ENABLE_SQLDB_FILTER', false],
    ['docdb-filter', 'PILOT_ENABLE_DOCDB_FILTER', true],
    ['kvstore-filter', 'PILOT_ENABLE_KVSTORE_FILTER', false],
    ['telemetry-labels', 'PILOT_ENABLE_TELEMETRY_LABEL', true],
    ['endpoint-telemetry-labels', 'PILOT_ENDPOINT_TELEMETRY_LABEL', true],
    ['http10', 'PILOT_HTTP10', false],
    ['sidecar-use-remote-address', 'PILOT_SIDECAR_USE_REMOTE_ADDRESS', false],
    ['jwt-authn', 'MESH_ENABLE_JWT_AUTHN_FILTER', true],
    ['rbac', 'MESH_ENABLE_RBAC_FILTER', true],
    ['ext-authz', 'MESH_ENABLE_EXT_AUTHZ_FILTER', true],
  ] as const;

  it('with their defaults, and says so', async () => {
    const r = await runCli('meshctl', ['experimental', 'plugins', '--program', 'pilot-discovery', '-o', 'json']);
    expect(r.code, r.stderr).to.equal(0);
    const rows = JSON.parse(r.stdout) as Obj[];
    expect(rows.map((row) => [row.name, row.source, row.enabled, row.reason])).to.deep.equal(
      BUILT_IN.map(([name, setting, on]) => [name, 'built-in', on, `${setting}=${on} (default)`]),
    );
    expect(rows.every((row) => typeof row.description === 'string' && row.description.length > 0)).to.equal(true);
  });

  it('following the environment, in the table too', async () => {
    const env = { PILOT_ENABLE_SQLDB_FILTER: 'true', PILOT_ENABLE_ALPN_FILTER: 'false' };
    const r = await runCli('meshctl', ['experimental', 'plugins', '--program', 'pilot-discovery'], { env });
    expect(r.code, r.stderr).to.equal(0);
    expect(r.stdout).to.match(/NAME\s+SOURCE\s+ENABLED\s+REASON/);
    expect(r.stdout).to.match(/sqldb-filter\s+built-in\s+on\s+PILOT_ENABLE_SQLDB_FILTER=true\n/);
    expect(r.stdout).to.match(/alpn-filter\s+built-in\s+off\s+PILOT_ENABLE_ALPN_FILTER=false\n/);
    expect(r.stdout).to.match(/docdb-filter\s+built-in\s+on\s+PILOT_ENABLE_DOCDB_FILTER=true \(default\)\n/);
  });
});
