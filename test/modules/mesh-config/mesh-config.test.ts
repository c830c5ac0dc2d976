import { expect } from 'chai';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { createContainer } from '../../../src/container';
import { CommandScope } from '../../../src/modules/cli/command-scope';
import {
  DEFAULT_MESH_CONFIG,
  DEFAULT_PROXY_CONFIG,
  mergeMeshConfig,
  MeshConfig,
  MeshConfigError,
  MeshConfigFileToken,
  parseMeshConfig,
  parseMeshConfigLayer,
  parseProxyConfig,
  readMeshConfigFile,
} from '../../../src/modules/mesh-config';
import { REPO_ROOT } from '../../helpers/run-cli';

const WHERE = '--meshConfig /x/mesh.yaml';
const parse = (text: string) => parseMeshConfig(text, WHERE);
const warningsOf = (text: string) => parseMeshConfigLayer(text, WHERE).warnings;
const failure = (text: string) => {
  try {
    parse(text);
  } catch (err) {
    expect(err).to.be.instanceOf(MeshConfigError);
    return (err as Error).message;
  }
  throw new Error('parsed without an error');
};

describe('mesh config', () => {
  let dir: string;
  beforeEach(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'mesh-config-'));
  });
  afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

  describe('fields and defaults', () => {
    it("has the incumbent's defaults", () => {
      const d = DEFAULT_MESH_CONFIG;
      expect([d.trustDomain, d.trustDomainAliases, d.rootNamespace, d.enableAutoMtls, d.pathNormalization]).to.deep.equal(['cluster.local', [], 'mesh-system', true, 'BASE']);
      expect(d.outboundTrafficPolicy).to.deep.equal({ mode: 'ALLOW_ANY' });
      expect([d.connectTimeoutMs, d.protocolDetectionTimeoutMs, d.dnsRefreshRateMs]).to.deep.equal([10_000, 0, 60_000]);
      expect([d.ingressClass, d.ingressService, d.ingressControllerMode, d.accessLogEncoding, d.enableTracing]).to.deep.equal(['mesh', 'mesh-ingressgateway', 'STRICT', 'TEXT', true]);
      expect(d.localityLbSetting).to.deep.equal({ enabled: true });
      expect(d.extensionProviders.map((p) => `${p.name}:${p.kind}`)).to.deep.equal(['prometheus:prometheus', 'envoy:envoyFileAccessLog']);
      expect(d.defaultConfig).to.include({ discoveryAddress: 'meshd.mesh-system.svc:15012', proxyAdminPort: 15000, statusPort: 15020, controlPlaneAuthPolicy: 'MUTUAL_TLS', interceptionMode: 'REDIRECT', drainDuration: '45s' });
      expect(parse('')).to.deep.equal(DEFAULT_MESH_CONFIG);
      expect(Object.isFrozen(d.defaultConfig) && Object.isFrozen(d.extensionProviders[0])).to.equal(true);
    });

    it('reads every field that matters here under the incumbent names', () => {
      const text = `
trustDomain: td1
trustDomainAliases: [td2, cluster.local]
rootNamespace: mesh-root
defaultConfig:
  discoveryAddress: meshd.mesh-root.svc:15012
  proxyAdminPort: 15100
  statusPort: 15121
  controlPlaneAuthPolicy: none
  interceptionMode: TPROXY
  holdApplicationUntilProxyStarts: true
  proxyMetadata: { MESH_META_DNS_CAPTURE: "true", COUNT: 3 }
  concurrency: 2
  tracing: { sampling: 12.5, zipkin: { address: "zipkin.mesh-root:9411" } }
outboundTrafficPolicy: { mode: REGISTRY_ONLY }
enableAutoMtls: false
extensionProviders:
- name: authz-http
  envoyExtAuthzHttp:
    service: authz.foo.svc.cluster.local
    port: "8000"
    timeout: 2s
    failOpen: true
    statusOnError: "503"
    pathPrefix: /check
    includeRequestHeadersInCheck: [x-user, "x-prefix-*"]
    headersToUpstreamOnAllow: [x-authz-user]
    headersToDownstreamOnDeny: [x-authz-reason]
    includeRequestBodyInCheck: { maxRequestBytes: 1024, allowPartialMessage: true }
- name: authz-grpc
  envoyExtAuthzGrpc: { service: foo/authz-grpc, port: 9000 }
- name: tracer
  zipkin: { service: zipkin.mesh-root.svc.cluster.local, port: 9411 }
defaultProviders: { tracing: [tracer] }
ingressClass: custom
ingressService: my-gateway
ingressControllerMode: DEFAULT
accessLogFile: /dev/stdout
accessLogEncoding: JSON
accessLogFormat: "%START_TIME%"
pathNormalization: { normalization: MERGE_SLASHES }
connectTimeout: 2.5s
protocolDetectionTimeout: 100ms
enableTracing: false
localityLbSetting: { enabled: true, distribute: [{ from: "us/*", to: { "us/east/*": 80, "us/west/*": 20 } }] }
dnsRefreshRate: 5s
discoverySelectors: [{ matchLabels: { team: a } }, { matchExpressions: [{ key: env, operator: In, values: [prod] }] }]
meshMTLS: { minProtocolVersion: TLSV1_3 }
caCertificates: [{ spiffeBundleUrl: "https://bundle.example.org", trustDomains: [td3] }]
`;
      const mesh = parse(text);
      expect([mesh.trustDomain, mesh.trustDomainAliases, mesh.rootNamespace, mesh.enableAutoMtls]).to.deep.equal(['td1', ['cluster.local', 'td2'], 'mesh-root', false]);
      expect(mesh.defaultConfig).to.deep.include({
        discoveryAddress: 'meshd.mesh-root.svc:15012',
        proxyAdminPort: 15100,
        statusPort: 15121,
        controlPlaneAuthPolicy: 'NONE',
        interceptionMode: 'TPROXY',
        holdApplicationUntilProxyStarts: true,
        proxyMetadata: { MESH_META_DNS_CAPTURE: 'true', COUNT: '3' },
        concurrency: 2,
        binaryPath: DEFAULT_PROXY_CONFIG.binaryPath,
      });
      expect(mesh.defaultConfig.tracing).to.deep.equal({ sampling: 12.5, tracer: { kind: 'zipkin', address: 'zipkin.mesh-root:9411', settings: { address: 'zipkin.mesh-root:9411' } } });
      expect(mesh.outboundTrafficPolicy.mode).to.equal('REGISTRY_ONLY');
      const http = mesh.extensionProviders.find((p) => p.name === 'authz-http')!;
      expect(http.kind).to.equal('envoyExtAuthzHttp');
      expect(http.problem).to.equal(undefined);
      expect(http.kind === 'envoyExtAuthzHttp' && http.envoyExtAuthzHttp).to.deep.equal({
        service: 'authz.foo.svc.cluster.local',
        port: 8000,
        timeoutMs: 2000,
        failOpen: true,
        clearRouteCache: false,
        statusOnError: 503,
        pathPrefix: '/check',
        includeRequestHeadersInCheck: ['x-user', 'x-prefix-*'],
        includeAdditionalHeadersInCheck: {},
        headersToUpstreamOnAllow: ['x-authz-user'],
        headersToDownstreamOnDeny: ['x-authz-reason'],
        headersToDownstreamOnAllow: [],
        includeRequestBodyInCheck: { maxRequestBytes: 1024, allowPartialMessage: true, packAsBytes: undefined },
      });
      expect(mesh.extensionProviders.map((p) => p.name)).to.deep.equal(['prometheus', 'envoy', 'authz-http', 'authz-grpc', 'tracer']);
      expect(mesh.defaultProviders).to.deep.equal({ tracing: ['tracer'], metrics: [], accessLogging: [] });
      expect([mesh.ingressClass, mesh.ingressService, mesh.ingressControllerMode]).to.deep.equal(['custom', 'my-gateway', 'DEFAULT']);
      expect([mesh.accessLogFile, mesh.accessLogEncoding, mesh.accessLogFormat]).to.deep.equal(['/dev/stdout', 'JSON', '%START_TIME%']);
      expect([mesh.pathNormalization, mesh.connectTimeoutMs, mesh.protocolDetectionTimeoutMs, mesh.enableTracing, mesh.dnsRefreshRateMs]).to.deep.equal(['MERGE_SLASHES', 2500, 100, false, 5000]);
      expect(mesh.localityLbSetting.distribute).to.deep.equal([{ from: 'us/*', to: { 'us/east/*': 80, 'us/west/*': 20 } }]);
      expect(mesh.discoverySelectors).to.deep.equal([{ matchLabels: { team: 'a' } }, { matchExpressions: [{ key: 'env', operator: 'In', values: ['prod'] }] }]);
      expect(mesh.meshMTLS).to.deep.equal({ minProtocolVersion: 'TLSV1_3' });
      expect(mesh.caCertificates).to.deep.equal([{ spiffeBundleUrl: 'https://bundle.example.org', trustDomains: ['td3'] }]);
      expect(warningsOf(text)).to.deep.equal([]);
    });

    it('reads JSON too, and keeps the defaults of absent or null fields', () => {
      expect(parse('{"trustDomain": "json.example"}').trustDomain).to.equal('json.example');
      expect(parse('trustDomain:\nrootNamespace: other\npathNormalization: {}')).to.deep.equal({ ...DEFAULT_MESH_CONFIG, rootNamespace: 'other' });
    });

    it('names the file and the field path of a wrongly typed or invalid value', () => {
      const cases: [string, string][] = [
        ['trustDomain: 42', 'trustDomain: must be a string'],
        ['trustDomain: ""', 'trustDomain: must not be empty'],
        ['trustDomain: a/b', 'trustDomain: "a/b" is not a valid trust domain (DNS labels separated by dots)'],
        ['trustDomainAliases: old.example.org', 'trustDomainAliases: must be a list of strings'],
        ['trustDomainAliases: [ok.example, 7]', 'trustDomainAliases[1]: must be a string'],
        ['trustDomainAliases: [ok.example, "Bad_Domain"]', 'trustDomainAliases[1]: "Bad_Domain" is not a valid trust domain (DNS labels separated by dots)'],
        ['rootNamespace: [a]', 'rootNamespace: must be a string'],
        ['enableAutoMtls: "yes"', 'enableAutoMtls: must be true or false'],
        ['defaultConfig: { proxyAdminPort: abc }', 'defaultConfig.proxyAdminPort: must be a port number from 0 to 65535, not "abc"'],
        ['defaultConfig: { statusPort: 70000 }', 'defaultConfig.statusPort: must be a port number from 0 to 65535, not 70000'],
        ['defaultConfig: { discoveryAddress: "meshd:port" }', 'defaultConfig.discoveryAddress: "meshd:port" is not host:port'],
        ['defaultConfig: { interceptionMode: CAPTURE }', 'defaultConfig.interceptionMode: must be one of REDIRECT, TPROXY, NONE, not "CAPTURE"'],
        ['defaultConfig: { drainDuration: soon }', 'defaultConfig.drainDuration: must be a duration such as 10s or 100ms, not "soon"'],
        ['defaultConfig: { proxyMetadata: { A: [1] } }', 'defaultConfig.proxyMetadata.A: must be a string'],
        ['defaultConfig: { tracing: { zipkin: {address: "z:1"}, datadog: {address: "d:2"} } }', 'defaultConfig.tracing: sets zipkin and datadog: only one tracer may be set'],
        ['defaultConfig: [a]', 'defaultConfig: must be a mapping of ProxyConfig fields'],
        ['outboundTrafficPolicy: { mode: DENY }', 'outboundTrafficPolicy.mode: must be one of ALLOW_ANY, REGISTRY_ONLY, not "DENY"'],
        ['extensionProviders: { name: a }', 'extensionProviders: must be a list of providers'],
        ['extensionProviders: [{ envoyExtAuthzHttp: {} }]', 'extensionProviders[0].name: is required'],
        ['extensionProviders: [{ name: a, envoyExtAuthzHttp: { port: x } }]', 'extensionProviders[0].envoyExtAuthzHttp.port: must be an integer, not "x"'],
        ['extensionProviders: [{ name: a, envoyExtAuthzHttp: { failOpen: 1 } }]', 'extensionProviders[0].envoyExtAuthzHttp.failOpen: must be true or false'],
        ['extensionProviders: [{ name: a, prometheus: {} }, { name: a, prometheus: {} }]', 'extensionProviders[1].name: "a" is used by another provider: names must be unique'],
        ['extensionProviders: [{ name: a, prometheus: {}, zipkin: {} }]', 'extensionProviders[0]: provider "a" sets zipkin and prometheus: exactly one provider per entry'],
        ['ingressControllerMode: ON', 'ingressControllerMode: must be one of UNSPECIFIED, OFF, DEFAULT, STRICT, not "ON"'],
        ['accessLogEncoding: XML', 'accessLogEncoding: must be one of TEXT, JSON, not "XML"'],
        ['pathNormalization: BASE', 'pathNormalization: must be a mapping (normalization: <mode>)'],
        ['pathNormalization: { normalization: SQUASH }', 'pathNormalization.normalization: unknown mode "SQUASH" (one of NONE, BASE, DEFAULT, MERGE_SLASHES, DECODE_AND_MERGE_SLASHES)'],
        ['connectTimeout: 2h', 'connectTimeout: must be at most 3600s, not 7200s'],
        ['connectTimeout: 0s', 'connectTimeout: must be at least 1ms, not 0s'],
        ['connectTimeout: 10', 'connectTimeout: must be a duration such as 10s or 100ms, not 10'],
        ['localityLbSetting: { distribute: [{ from: a, to: { b: 50 } }] }', 'localityLbSetting.distribute[0].to: total locality weight 50 != 100'],
        ['localityLbSetting: { failover: [{ from: us, to: us }] }', 'localityLbSetting.failover[0]: locality lb failover settings must specify different regions'],
        ['discoverySelectors: [{ matchExpressions: [{ key: a, operator: Has }] }]', 'discoverySelectors[0].matchExpressions[0].operator: must be one of In, NotIn, Exists, DoesNotExist, not "Has"'],
        ['discoverySelectors: [{ matchExpressions: [{ key: a, operator: In }] }]', 'discoverySelectors[0].matchExpressions[0].values: must not be empty for operator In'],
        ['meshMTLS: { ecdhCurves: [P-256] }', 'meshMTLS.ecdhCurves: mesh TLS does not support ECDH curves configuration'],
        ['caCertificates: [{ pem: "not a certificate" }]', 'caCertificates[0].pem: holds no PEM certificate'],
        ['caCertificates: [{ certSigners: [a] }]', 'caCertificates[0]: needs pem or spiffeBundleUrl'],
      ];
      for (const [text, message] of cases) expect(failure(text), text).to.equal(`${WHERE}: ${message}`);
    });

    it('warns about unknown fields, ignored fields and unusable providers, naming them, but does not fail', () => {
      const text = `
trustDomain: td1
colour: blue
defaultServiceExportTo: ["."]
defaultConfig: { shape: round, statsdUdpAddress: "s:1" }
extensionProviders:
- { name: bad, envoyExtAuthzHttp: { service: "", port: 0, statusOnError: "299", pathPrefix: check } }
- { name: other, unknownKind: {} }
defaultProviders: { metrics: [nothing] }
`;
      expect(parse(text).trustDomain).to.equal('td1');
      expect(warningsOf(text)).to.deep.equal([
        `${WHERE}: defaultConfig.shape: unknown field (ignored)`,
        `${WHERE}: defaultConfig.statsdUdpAddress: not used by this mesh (ignored)`,
        `${WHERE}: extensionProviders[0].envoyExtAuthzHttp: provider "bad" cannot be used: service must not be empty; port must be in the range [1, 65535], found: 0; ` +
          'unsupported statusOnError "299": not an HTTP status code Envoy knows; pathPrefix must begin with `/`, found: "check" (policies that use it deny what they would check)',
        `${WHERE}: extensionProviders[1]: provider "other" has no provider this mesh knows (unknownKind; known: envoyExtAuthzHttp, envoyExtAuthzGrpc, zipkin, lightstep, datadog, stackdriver, opencensus, skywalking, opentelemetry, envoyFileAccessLog, envoyHttpAls, envoyTcpAls, envoyOtelAls, prometheus): ignored`,
        `${WHERE}: colour: unknown field (ignored)`,
        `${WHERE}: defaultServiceExportTo: not used by this mesh (ignored)`,
        `${WHERE}: defaultProviders.metrics[0]: no extension provider is named "nothing"`,
      ]);
      const bad = parse(text).extensionProviders.find((p) => p.name === 'bad')!;
      expect(bad.problem).to.match(/^service must not be empty; port must be in the range/);
      expect(parse(text).extensionProviders.map((p) => p.name)).to.not.include('other');
    });

    it('refuses text that is not YAML, not a mapping, several documents, or hostile, in one line', () => {
      const message = failure('trustDomain: [unclosed');
      expect(message).to.match(new RegExp(`^${WHERE}: not valid YAML: `));
      expect(message).to.not.contain('\n');
      expect(failure('- a\n- b')).to.equal(`${WHERE}: must be a mapping of mesh config fields`);
      expect(failure('trustDomain: a\n---\ntrustDomain: b')).to.equal(`${WHERE}: holds 2 YAML documents, not one`);
      const laughs = ['a: &a ["x","x","x","x","x","x","x","x","x","x"]', ...Array.from({ length: 9 }, (_, i) => `${String.fromCharCode(98 + i)}: &${String.fromCharCode(98 + i)} [${Array(10).fill(`*${String.fromCharCode(97 + i)}`).join(',')}]`)].join('\n');
      expect(failure(laughs)).to.match(new RegExp(`^${WHERE}: not valid YAML: `));
      expect(failure('['.repeat(100_000))).to.match(new RegExp(`^${WHERE}: not valid YAML: `));
      expect(failure(`trustDomain: "${'a'.repeat(1024 * 1024 + 1)}"`)).to.match(/bytes is more than the 1048576 a mesh config may have$/);
    });
  });

  describe('layering (defaults <- file <- ConfigMap), as the incumbent merges mesh configs', () => {
    const layer = (text: string) => parseMeshConfigLayer(text, WHERE).layer;

    it('overrides scalar fields, merges defaultConfig field by field (proxyMetadata key by key), unions aliases and merges providers by name', () => {
      const file = mergeMeshConfig(DEFAULT_MESH_CONFIG, layer(`
trustDomain: td1
trustDomainAliases: [td2]
defaultConfig: { proxyAdminPort: 15100, proxyMetadata: { A: "1", B: "1" } }
extensionProviders: [{ name: authz, envoyExtAuthzGrpc: { service: a/x, port: 1 } }, { name: logs, envoyFileAccessLog: { path: /tmp/a } }]
defaultProviders: { tracing: [t] }
`));
      const configMap = mergeMeshConfig(file, layer(`
trustDomain: td9
trustDomainAliases: [cluster.local]
defaultConfig: { statusPort: 15121, proxyMetadata: { B: "2" } }
extensionProviders: [{ name: authz, envoyExtAuthzHttp: { service: a/y, port: 2 } }]
defaultProviders: { metrics: [prometheus] }
`));
      expect(configMap.trustDomain).to.equal('td9');
      expect(configMap.trustDomainAliases).to.deep.equal(['cluster.local', 'td2']);
      expect(configMap.defaultConfig).to.deep.include({ proxyAdminPort: 15100, statusPort: 15121, proxyMetadata: { A: '1', B: '2' } });
      expect(configMap.extensionProviders.map((p) => `${p.name}:${p.kind}`)).to.deep.equal(['prometheus:prometheus', 'envoy:envoyFileAccessLog', 'authz:envoyExtAuthzHttp', 'logs:envoyFileAccessLog']);
      expect(configMap.defaultProviders).to.deep.equal({ tracing: ['t'], metrics: ['prometheus'], accessLogging: [] });
    });
  });

  describe('ProxyConfig documents (PROXY_CONFIG, the proxy config annotation)', () => {
    it('apply over a base with the same rules and messages, field paths from the document root', () => {
      const { config, warnings } = parseProxyConfig('{"statusPort": 15121, "proxyMetadata": {"B": "2"}, "nonsense": 1}', 'PROXY_CONFIG', {
        ...DEFAULT_PROXY_CONFIG,
        proxyMetadata: { A: '1' },
      });
      expect(config).to.deep.include({ statusPort: 15121, proxyAdminPort: 15000, proxyMetadata: { A: '1', B: '2' } });
      expect(warnings).to.deep.equal(['PROXY_CONFIG: nonsense: unknown field (ignored)']);
      expect(() => parseProxyConfig('proxyAdminPort: lots', 'PROXY_CONFIG', DEFAULT_PROXY_CONFIG)).to.throw(MeshConfigError, 'PROXY_CONFIG: proxyAdminPort: must be a port number from 0 to 65535, not "lots"');
      expect(() => parseProxyConfig('[1]', 'PROXY_CONFIG', DEFAULT_PROXY_CONFIG)).to.throw(MeshConfigError, 'PROXY_CONFIG: must be a mapping of ProxyConfig fields');
    });
  });

  describe('files', () => {
    it('uses the defaults when the file does not exist, and refuses one it cannot read', () => {
      expect(readMeshConfigFile(path.join(dir, 'absent')).values).to.deep.equal(DEFAULT_MESH_CONFIG);
      expect(() => readMeshConfigFile(dir)).to.throw(MeshConfigError, `--meshConfig ${dir}: a directory, not a regular file`);
    });

    it('is read from the file bound in a command scope, and is the defaults without one', () => {
      const file = path.join(dir, 'mesh');
      fs.writeFileSync(file, 'trustDomain: example.org\nrootNamespace: mesh-root\n');
      const scoped = createContainer({ program: 'pilot-discovery', env: {}, cwd: REPO_ROOT }).container;
      const mesh = scoped.get<CommandScope>(CommandScope).resolve(MeshConfig, [[MeshConfigFileToken, file]]).current();
      expect([mesh.trustDomain, mesh.rootNamespace]).to.deep.equal(['example.org', 'mesh-root']);
      const unscoped = createContainer({ program: 'pilot-discovery', env: {}, cwd: REPO_ROOT }).container.get(MeshConfig).current();
      expect([unscoped.trustDomain, unscoped.rootNamespace]).to.deep.equal(['cluster.local', 'mesh-system']);
    });
  });
});
