import { expect } from 'chai';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { agentNode } from '../../../src/modules/agent/node-identity';
import { Settings } from '../../../src/modules/settings';
import {
  BOOTSTRAP_TYPE,
  BootstrapError,
  buildEnvoyBootstrap,
  checkBootstrap,
  DEFAULT_SDS_SOCKET_PATH,
  EnvoyBootstrapInputs,
  proxyIpFamily,
  TEMPLATE_PLACEHOLDERS,
  writeEnvoyBootstrap,
  xdsSocketPath,
} from '../../../src/modules/agent/bootstrap';
import { decodeMessage } from '../../../src/modules/envoy/protos';

// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Obj = Record<string, any>;

function inputs(dir: string, extra: Partial<EnvoyBootstrapInputs> = {}): EnvoyBootstrapInputs {
  const settings = new Settings('pilot-agent', {
    MESH_METAJSON_LABELS: '{"app":"shop","version":"v1"}',
    MESH_META_CLUSTER_ID: 'east',
    INSTANCE_IP: '10.1.2.3',
    POD_NAME: 'shop-1',
    POD_NAMESPACE: 'foo',
  });
  const node = agentNode(settings, { domain: '', serviceCluster: 'shop.foo', interceptionMode: 'REDIRECT' });
  const configPath = path.join(dir, 'etc', 'mesh', 'proxy');
  return {
    node,
    proxyAdminPort: 15000,
    agentStatusPort: 15020,
    proxyStatusPort: 15021,
    proxyMetricsPort: 15090,
    xdsSocketPath: xdsSocketPath(configPath),
    sdsSocketPath: DEFAULT_SDS_SOCKET_PATH,
    delta: true,
    configPath,
    discoveryAddress: 'meshd.mesh-system.svc:15012',
    ...extra,
  };
}

/** The bootstrap as Envoy reads it: encoded with the Envoy protos, then decoded. */
function decoded(document: object): Obj {
  return decodeMessage(BOOTSTRAP_TYPE, checkBootstrap(document, 'test'));
}

const cluster = (b: Obj, name: string): Obj => b.static_resources.clusters.find((c: Obj) => c.name === name);
const endpointAddress = (c: Obj): Obj => c.load_assignment.endpoints[0].lb_endpoints[0].endpoint.address;
const listenerOnPort = (b: Obj, port: number): Obj => b.static_resources.listeners.find((l: Obj) => l.address.socket_address.port_value === port);
const routeOf = (listener: Obj): Obj => listener.filter_chains[0].filters[0].typed_config.route_config.virtual_hosts[0].routes[0];

function expectBootstrapError(run: () => unknown, ...parts: (string | RegExp)[]): BootstrapError {
  let caught: unknown;
  try {
    run();
  } catch (e) {
    caught = e;
  }
  expect(caught, 'expected a BootstrapError').to.be.instanceOf(BootstrapError);
  const message = (caught as Error).message;
  for (const part of parts) {
    if (typeof part === 'string') expect(message).to.contain(part);
    else expect(message).to.match(part);
  }
  return caught as BootstrapError;
}

describe('agent: the Envoy bootstrap', () => {
  let dir: string;
  beforeEach(() => (dir = fs.mkdtempSync(path.join(os.tmpdir(), 'mesh-bootstrap-'))));
  afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

  const write = (name: string, content: string): string => {
    const file = path.join(dir, name);
    fs.writeFileSync(file, content);
    return file;
  };

  describe('the default bootstrap', () => {
    it('is written to <configPath>/envoy-rev.json and reads back as an envoy.config.bootstrap.v3.Bootstrap', () => {
      const file = writeEnvoyBootstrap(inputs(dir));
      expect(file).to.equal(path.join(dir, 'etc', 'mesh', 'proxy', 'envoy-rev.json'));
      const written = JSON.parse(fs.readFileSync(file, 'utf8'));
      expect(written).to.deep.equal(buildEnvoyBootstrap(inputs(dir)));
      expect(fs.readdirSync(path.dirname(file))).to.deep.equal(['envoy-rev.json']); // no temporary file left
      const b = decoded(written);
      expect(b.node.id).to.equal('sidecar~10.1.2.3~shop-1.foo~foo.svc.cluster.local');
      expect(b.node.cluster).to.equal('shop.foo');
      const metadata = structJson(b.node.metadata);
      expect(metadata).to.include({ NAMESPACE: 'foo', INSTANCE_IPS: '10.1.2.3', INTERCEPTION_MODE: 'REDIRECT', CLUSTER_ID: 'east', NAME: 'shop-1' });
      expect(metadata.LABELS).to.deep.equal({ app: 'shop', version: 'v1' });
    });

    it('serves the admin API on 127.0.0.1:proxyAdminPort, and Prometheus stats on PROXY_METRICS_PORT from it', () => {
      const b = decoded(buildEnvoyBootstrap(inputs(dir)));
      expect(b.admin.address.socket_address).to.include({ address: '127.0.0.1', port_value: 15000 });
      const stats = listenerOnPort(b, 15090);
      expect(stats.address.socket_address.address).to.equal('0.0.0.0');
      expect(routeOf(stats)).to.deep.include({ match: { prefix: '/stats/prometheus' }, route: { cluster: 'prometheus_stats' } });
      expect(endpointAddress(cluster(b, 'prometheus_stats')).socket_address).to.include({ address: '127.0.0.1', port_value: 15000 });
    });

    it('answers /healthz/ready on PROXY_STATUS_PORT from the agent status port', () => {
      const b = decoded(buildEnvoyBootstrap(inputs(dir)));
      const ready = listenerOnPort(b, 15021);
      expect(ready.address.socket_address.address).to.equal('0.0.0.0');
      expect(routeOf(ready)).to.deep.include({ match: { prefix: '/healthz/ready' }, route: { cluster: 'agent' } });
      expect(endpointAddress(cluster(b, 'agent')).socket_address).to.include({ address: '127.0.0.1', port_value: 15020 });
    });

    it('fetches its configuration over ADS through the agent xDS socket, HTTP/2, delta when asked', () => {
      const b = decoded(buildEnvoyBootstrap(inputs(dir)));
      expect(b.dynamic_resources.ads_config).to.deep.include({ api_type: 'DELTA_GRPC', transport_api_version: 'V3', grpc_services: [{ envoy_grpc: { cluster_name: 'xds-grpc' } }] });
      for (const source of ['lds_config', 'cds_config']) expect(b.dynamic_resources[source]).to.deep.include({ ads: {}, resource_api_version: 'V3' });
      const xds = cluster(b, 'xds-grpc');
      expect(endpointAddress(xds)).to.deep.equal({ pipe: { path: path.join(dir, 'etc', 'mesh', 'proxy', 'XDS') } });
      const options = xds.typed_extension_protocol_options['envoy.extensions.upstreams.http.v3.HttpProtocolOptions'];
      expect(options['@type']).to.equal('type.googleapis.com/envoy.extensions.upstreams.http.v3.HttpProtocolOptions');
      expect(options.explicit_http_config).to.have.property('http2_protocol_options');
      const sotw = decoded(buildEnvoyBootstrap(inputs(dir, { delta: false })));
      expect(sotw.dynamic_resources.ads_config.api_type).to.equal('GRPC');
    });

    it('gets certificates over SDS from the agent SDS socket', () => {
      const sds = cluster(decoded(buildEnvoyBootstrap(inputs(dir))), 'sds-grpc');
      expect(endpointAddress(sds)).to.deep.equal({ pipe: { path: './var/run/secrets/workload-spiffe-uds/socket' } });
      expect(sds.typed_extension_protocol_options['envoy.extensions.upstreams.http.v3.HttpProtocolOptions'].explicit_http_config).to.have.property('http2_protocol_options');
    });

    it('binds IPv6 addresses for an IPv6-only workload, and logs outlier events when --outlierLogPath is set', () => {
      expect(proxyIpFamily(['fd00::1', 'fd00::2'])).to.equal('v6');
      expect(proxyIpFamily(['fd00::1', '10.0.0.1'])).to.equal('v4');
      const b = decoded(buildEnvoyBootstrap(inputs(dir, { ipFamily: 'v6', outlierLogPath: '/dev/stdout' })));
      expect(b.admin.address.socket_address.address).to.equal('::1');
      expect(listenerOnPort(b, 15090).address.socket_address.address).to.equal('::');
      expect(b.cluster_manager.outlier_detection.event_log_path).to.equal('/dev/stdout');
      expect(decoded(buildEnvoyBootstrap(inputs(dir)))).to.not.have.property('cluster_manager');
    });

    it('sets Envoy runtime flags in a static layer: fragments stripped, not rejected; kept when HTTP_STRIP_FRAGMENT_FROM_PATH_UNSAFE_IF_DISABLED is false', () => {
      const layersOf = (extra: Partial<EnvoyBootstrapInputs>) => decoded(buildEnvoyBootstrap(inputs(dir, extra))).layered_runtime.layers as Obj[];
      const flagsOf = (extra: Partial<EnvoyBootstrapInputs>) => structJson(layersOf(extra).find((l) => l.name === 'global config')!.static_layer);
      expect(flagsOf({})).to.deep.equal({ 'envoy.reloadable_features.http_reject_path_with_fragment': false });
      expect(flagsOf({ stripFragmentFromPath: true })).to.deep.equal({ 'envoy.reloadable_features.http_reject_path_with_fragment': false });
      expect(flagsOf({ stripFragmentFromPath: false })).to.deep.equal({
        'envoy.reloadable_features.http_reject_path_with_fragment': false,
        'envoy.reloadable_features.http_strip_fragment_from_path_unsafe_if_disabled': false,
      });
      // The admin layer lets `runtime_modify` on the admin port change flags at run time, as in the incumbent.
      expect(layersOf({}).map((l) => l.name)).to.deep.equal(['global config', 'admin']);
      expect(layersOf({})[1]).to.have.property('admin_layer');
    });
  });

  describe('MESH_BOOTSTRAP_OVERRIDE', () => {
    it('is merged over the generated bootstrap as Envoy merges: objects field by field, lists appended, a oneof member replacing the other', () => {
      const override = write(
        'override.yaml',
        [
          'node:',
          '  metadata: { EXTRA: "yes", NAMESPACE: bar }',
          'admin:',
          '  address: { pipe: { path: /tmp/envoy-admin.sock } }',
          'staticResources:', // lowerCamelCase, as proto3 JSON allows
          '  clusters:',
          '  - name: zipkin',
          '    type: STRICT_DNS',
          '    connectTimeout: 2s',
          '    load_assignment:',
          '      cluster_name: zipkin',
          '      endpoints: [{ lb_endpoints: [{ endpoint: { address: { socket_address: { address: zipkin.tracing, port_value: 9411 } } } }] }]',
          'stats_flush_interval: 10s',
        ].join('\n'),
      );
      const document = buildEnvoyBootstrap(inputs(dir, { overrideFile: override }));
      const b = decoded(document);
      expect(b.admin.address).to.deep.equal({ pipe: { path: '/tmp/envoy-admin.sock' } });
      expect(b.static_resources.clusters.map((c: Obj) => c.name)).to.deep.equal(['prometheus_stats', 'agent', 'sds-grpc', 'xds-grpc', 'zipkin']);
      expect(cluster(b, 'zipkin').connect_timeout).to.deep.include({ seconds: '2' });
      expect(cluster(document as Obj, 'zipkin').connect_timeout, 'written under its proto name').to.equal('2s');
      expect(b.stats_flush_interval).to.deep.include({ seconds: '10' });
      expect(b.static_resources.listeners).to.have.length(2);
      expect((document.node as Obj).metadata).to.include({ EXTRA: 'yes', NAMESPACE: 'bar', INSTANCE_IPS: '10.1.2.3' });
      expect(document).to.have.property('static_resources').that.does.not.have.property('staticResources');
    });

    it('may be JSON, and is merged over a --templateFile bootstrap as well', () => {
      const template = write('template.json', minimalTemplate());
      const override = write('override.json', JSON.stringify({ admin: { address: { socket_address: { port_value: 15555 } } } }));
      const b = decoded(buildEnvoyBootstrap(inputs(dir, { templateFile: template, overrideFile: override })));
      expect(b.admin.address.socket_address).to.include({ address: '127.0.0.1', port_value: 15555 });
      expect(b.node.id).to.equal('sidecar~10.1.2.3~shop-1.foo~foo.svc.cluster.local');
    });

    it('is refused, naming the setting, the file and the field, when a field is misspelt (before Envoy sees it)', () => {
      const override = write('typo.yaml', 'static_resources:\n  clusters:\n  - name: extra\n    conect_timeout: 2s\n');
      expectBootstrapError(
        () => buildEnvoyBootstrap(inputs(dir, { overrideFile: override })),
        `MESH_BOOTSTRAP_OVERRIDE ${override}: static_resources.clusters[0].conect_timeout: unknown field of envoy.config.cluster.v3.Cluster (did you mean connect_timeout?)`,
      );
      expect(fs.existsSync(path.join(dir, 'etc'))).to.equal(false);
      expectBootstrapError(() => writeEnvoyBootstrap(inputs(dir, { overrideFile: override })), 'conect_timeout');
      expect(fs.existsSync(path.join(dir, 'etc', 'mesh', 'proxy', 'envoy-rev.json')), 'nothing written').to.equal(false);
    });

    it('is refused for wrong types, unknown enum values, unknown Any types and fields inside an Any', () => {
      const cases: [string, string][] = [
        ['admin: { address: { socket_address: { port_value: "many" } } }', 'admin.address.socket_address.port_value: expected an integer from 0 to 4294967295 (uint32), got string "many"'],
        ['static_resources: { clusters: [{ name: x, connect_timeout: 5 }] }', 'static_resources.clusters[0].connect_timeout: expected a duration such as "1s"'],
        ['static_resources: { clusters: [{ name: x, lb_policy: ROUND_ROBBIN }] }', 'static_resources.clusters[0].lb_policy: expected one of ROUND_ROBIN, LEAST_REQUEST'],
        ['static_resources: { clusters: { name: x } }', 'static_resources.clusters: expected a list, got an object'],
        ['admin: { access_log: [{ name: l, typed_config: { "@type": type.googleapis.com/envoy.Nonsense } }] }', 'admin.access_log[0].typed_config.@type: unknown type type.googleapis.com/envoy.Nonsense'],
        ['admin: { access_log: [{ name: l, typed_config: { "@type": type.googleapis.com/envoy.extensions.access_loggers.file.v3.FileAccessLog, paht: /x } }] }', 'admin.access_log[0].typed_config.paht: unknown field of envoy.extensions.access_loggers.file.v3.FileAccessLog (did you mean path?)'],
        ['admin: { address: { socket_address: { address: 1.2.3.4, port_value: 1 }, pipe: { path: /x } } }', 'admin.address.pipe: socket_address and pipe are alternatives (oneof address); set only one'],
      ];
      for (const [yaml, message] of cases) {
        const override = write('bad.yaml', yaml);
        expectBootstrapError(() => buildEnvoyBootstrap(inputs(dir, { overrideFile: override })), `MESH_BOOTSTRAP_OVERRIDE ${override}: ${message}`);
      }
    });

    it('is refused when the merge gives two static clusters one name (lists are appended, not matched by name)', () => {
      const override = write('dup.yaml', 'static_resources: { clusters: [{ name: xds-grpc, type: STATIC }] }');
      expectBootstrapError(
        () => buildEnvoyBootstrap(inputs(dir, { overrideFile: override })),
        'MESH_BOOTSTRAP_OVERRIDE',
        'lists are appended to',
        'static_resources.clusters[4]: name "xds-grpc" is already used by static_resources.clusters[3]',
      );
    });

    it('is refused, naming the setting, when the file is missing, not JSON or YAML, or not an object', () => {
      const missing = path.join(dir, 'nope.yaml');
      expectBootstrapError(() => buildEnvoyBootstrap(inputs(dir, { overrideFile: missing })), `MESH_BOOTSTRAP_OVERRIDE ${missing}: cannot read the file`, 'ENOENT');
      const broken = write('broken.yaml', 'admin: { address: [\n');
      expectBootstrapError(() => buildEnvoyBootstrap(inputs(dir, { overrideFile: broken })), `MESH_BOOTSTRAP_OVERRIDE ${broken}: not valid JSON or YAML`);
      const list = write('list.json', '[1, 2]');
      expectBootstrapError(() => buildEnvoyBootstrap(inputs(dir, { overrideFile: list })), `MESH_BOOTSTRAP_OVERRIDE ${list}: must be a JSON or YAML object`);
    });
  });

  describe('--templateFile', () => {
    it('replaces the default bootstrap, with its placeholders substituted (JSON)', () => {
      const template = write('bootstrap.json', minimalTemplate());
      const document = buildEnvoyBootstrap(inputs(dir, { templateFile: template }));
      const b = decoded(document);
      expect(b.node).to.include({ id: 'sidecar~10.1.2.3~shop-1.foo~foo.svc.cluster.local', cluster: 'shop.foo' });
      expect((document.node as Obj).metadata).to.include({ NAMESPACE: 'foo', CLUSTER_ID: 'east' });
      expect(b.admin.address.socket_address).to.include({ address: '127.0.0.1', port_value: 15000 });
      expect(b.dynamic_resources.ads_config.api_type).to.equal('DELTA_GRPC');
      expect(endpointAddress(cluster(b, 'xds-grpc'))).to.deep.equal({ pipe: { path: path.join(dir, 'etc', 'mesh', 'proxy', 'XDS') } });
      expect(b.static_resources.clusters).to.have.length(1);
      expect(b.static_resources).to.not.have.property('listeners');
    });

    it('may be YAML and use every documented placeholder', () => {
      const lines = [
        'node: { id: "{{ NODE_ID }}", cluster: "{{NODE_CLUSTER}}", metadata: {{ NODE_METADATA_JSON }} }',
        'admin: { address: { socket_address: { address: "{{ ADMIN_ADDRESS }}", port_value: {{ ADMIN_PORT }} } } }',
        'static_resources:',
        '  clusters:',
        '  - { name: xds-grpc, type: STATIC, load_assignment: { cluster_name: xds-grpc, endpoints: [{ lb_endpoints: [{ endpoint: { address: { pipe: { path: "{{ XDS_SOCKET_PATH }}" } } } }] }] } }',
        '  - { name: sds-grpc, type: STATIC, load_assignment: { cluster_name: sds-grpc, endpoints: [{ lb_endpoints: [{ endpoint: { address: { pipe: { path: "{{ SDS_SOCKET_PATH }}" } } } }] }] } }',
        '  - { name: agent, type: STATIC, load_assignment: { cluster_name: agent, endpoints: [{ lb_endpoints: [{ endpoint: { address: { socket_address: { address: "{{ ADMIN_ADDRESS }}", port_value: {{ AGENT_STATUS_PORT }} } } } }] }] } }',
        '  listeners:',
        '  - { name: ready, address: { socket_address: { address: "{{ WILDCARD_ADDRESS }}", port_value: {{ PROXY_STATUS_PORT }} } } }',
        '  - { name: stats, address: { socket_address: { address: "{{ WILDCARD_ADDRESS }}", port_value: {{ PROXY_METRICS_PORT }} } } }',
        'dynamic_resources: { ads_config: { api_type: "{{ XDS_API_TYPE }}", grpc_services: [{ envoy_grpc: { cluster_name: xds-grpc } }] } }',
        'layered_runtime: { layers: [{ name: info, static_layer: { discovery: "{{ DISCOVERY_ADDRESS }}", config: "{{ CONFIG_PATH }}" } }] }',
      ];
      const used = new Set([...lines.join('\n').matchAll(/\{\{\s*(\w+)\s*\}\}/g)].map((m) => m[1]));
      expect([...used].sort()).to.deep.equal([...TEMPLATE_PLACEHOLDERS].sort());
      const template = write('bootstrap.yaml', lines.join('\n'));
      const document = buildEnvoyBootstrap(inputs(dir, { templateFile: template, delta: false }));
      const b = decoded(document);
      expect(b.node.cluster).to.equal('shop.foo');
      expect(b.dynamic_resources.ads_config.api_type).to.equal('GRPC');
      expect(endpointAddress(cluster(b, 'sds-grpc')).pipe.path).to.equal(DEFAULT_SDS_SOCKET_PATH);
      expect(endpointAddress(cluster(b, 'agent')).socket_address.port_value).to.equal(15020);
      expect(b.static_resources.listeners.map((l: Obj) => l.address.socket_address.port_value)).to.deep.equal([15021, 15090]);
      expect((document.layered_runtime as Obj).layers[0].static_layer).to.deep.equal({ discovery: 'meshd.mesh-system.svc:15012', config: path.join(dir, 'etc', 'mesh', 'proxy') });
    });

    it('is refused with the file and line of an unknown placeholder, and a hint for Go template syntax', () => {
      const template = write('bad.json', '{\n  "node": { "id": "{{ NODE_ID }}" },\n  "admin": { "address": "{{ ADMIN_PORTT }}" }\n}\n');
      const error = expectBootstrapError(() => buildEnvoyBootstrap(inputs(dir, { templateFile: template })), `--templateFile ${template}:3: unknown placeholder {{ ADMIN_PORTT }}`);
      expect(error.message).to.contain('known placeholders: NODE_ID, NODE_CLUSTER');
      const go = write('go.json', '{ "node": { "id": "{{ .nodeID }}" } }');
      expectBootstrapError(() => buildEnvoyBootstrap(inputs(dir, { templateFile: go })), `--templateFile ${go}:1: unknown placeholder {{ .nodeID }}`, 'Go template syntax is not supported');
      const unclosed = write('unclosed.json', '{\n "node": { "id": "{{ NODE_ID" } }');
      expectBootstrapError(() => buildEnvoyBootstrap(inputs(dir, { templateFile: unclosed })), `--templateFile ${unclosed}:2: "{{" without a closing "}}"`);
    });

    it('is refused when the result does not parse, is not an Envoy bootstrap, or cannot be read', () => {
      const broken = write('broken.json', '{ "node": { "id": "{{NODE_ID}}" }, "admin": ');
      expectBootstrapError(() => buildEnvoyBootstrap(inputs(dir, { templateFile: broken })), `--templateFile ${broken}: after substitution the bootstrap is not valid JSON or YAML`);
      const wrong = write('wrong.json', '{ "node": { "id": "{{NODE_ID}}" }, "admin": { "adress": {} } }');
      expectBootstrapError(() => buildEnvoyBootstrap(inputs(dir, { templateFile: wrong })), `--templateFile ${wrong}: admin.adress: unknown field of envoy.config.bootstrap.v3.Admin (did you mean address?)`);
      const nodeless = write('nodeless.json', '{ "admin": {} }');
      expectBootstrapError(() => buildEnvoyBootstrap(inputs(dir, { templateFile: nodeless })), `--templateFile ${nodeless}: node.id: must be set`);
      const dangling = write('dangling.json', minimalTemplate((t) => (t.static_resources = {})));
      expectBootstrapError(() => buildEnvoyBootstrap(inputs(dir, { templateFile: dangling })), 'dynamic_resources.ads_config.grpc_services[0].envoy_grpc.cluster_name: no static cluster is named "xds-grpc"');
      const missing = path.join(dir, 'missing.json');
      expectBootstrapError(() => buildEnvoyBootstrap(inputs(dir, { templateFile: missing })), `--templateFile ${missing}: cannot read the file`);
    });
  });
});

/** A small bootstrap template (JSON text) with placeholders; `change` edits it before it is written out. */
function minimalTemplate(change: (t: Obj) => void = () => {}): string {
  const template: Obj = {
    node: { id: '{{NODE_ID}}', cluster: '{{ NODE_CLUSTER }}', metadata: { NAMESPACE: 'foo', CLUSTER_ID: 'east' } },
    admin: { address: { socket_address: { address: '{{ADMIN_ADDRESS}}', port_value: 'ADMIN_PORT' } } },
    dynamic_resources: { ads_config: { api_type: '{{XDS_API_TYPE}}', transport_api_version: 'V3', grpc_services: [{ envoy_grpc: { cluster_name: 'xds-grpc' } }] } },
    static_resources: {
      clusters: [
        {
          name: 'xds-grpc',
          type: 'STATIC',
          load_assignment: { cluster_name: 'xds-grpc', endpoints: [{ lb_endpoints: [{ endpoint: { address: { pipe: { path: '{{XDS_SOCKET_PATH}}' } } } }] }] },
        },
      ],
    },
  };
  change(template);
  // A number placeholder stands bare, outside quotes.
  return JSON.stringify(template, null, 2).replace('"ADMIN_PORT"', '{{ ADMIN_PORT }}');
}

/** A decoded google.protobuf.Struct ({ fields: { k: { string_value } } }) as plain JSON. */
function structJson(struct: Obj): Obj {
  return Object.fromEntries(Object.entries(struct.fields ?? {}).map(([k, v]) => [k, valueJson(v as Obj)]));
}

function valueJson(v: Obj): unknown {
  if ('string_value' in v) return v.string_value;
  if ('number_value' in v) return v.number_value;
  if ('bool_value' in v) return v.bool_value;
  if ('struct_value' in v) return structJson(v.struct_value);
  if ('list_value' in v) return (v.list_value.values ?? []).map(valueJson);
  return null;
}
