/**
 * ProxyConfig (the incumbent's message, same field names): the mesh config's `defaultConfig`,
 * overridden by the agent's `PROXY_CONFIG` and the pod's `proxy.mesh.io/config` annotation.
 * One parser for all of them: the daemon, the agent and the injector read it alike.
 */
import { FieldReader, fieldPath, hostPortProblem, isMapping, Mapping } from './fields';

export type InterceptionMode = 'REDIRECT' | 'TPROXY' | 'NONE';
export const INTERCEPTION_MODES: readonly InterceptionMode[] = ['REDIRECT', 'TPROXY', 'NONE'];
export type ControlPlaneAuthPolicy = 'MUTUAL_TLS' | 'NONE';

/** Where spans go (`tracing`): one tracer at most, plus the sampling settings. */
export interface ProxyTracing {
  /** Percent of requests sampled, 0.0 to 100.0. */
  sampling?: number;
  maxPathTagLength?: number;
  customTags?: Record<string, unknown>;
  /** The tracer's kind (`zipkin`, `datadog`, `lightstep`, `stackdriver`, `openCensusAgent`) and its settings. */
  tracer?: { kind: string; address?: string; settings: Mapping };
  tlsSettings?: Mapping;
}

export interface ProxyConfig {
  /** `host:port` of the daemon's xDS (and CA) service. */
  discoveryAddress: string;
  /** Where the Envoy binary is looked for; absent means the built-in proxy. */
  binaryPath: string;
  /** Where the agent writes the proxy's bootstrap and its sockets. */
  configPath: string;
  serviceCluster: string;
  /** Durations, as written (`45s`). */
  drainDuration: string;
  terminationDrainDuration: string;
  interceptionMode: InterceptionMode;
  /** MUTUAL_TLS: xDS over mTLS with a workload certificate; NONE: plaintext xDS. */
  controlPlaneAuthPolicy: ControlPlaneAuthPolicy;
  /** 0 lets the system pick a port (tests run many proxies on one machine). */
  proxyAdminPort: number;
  statusPort: number;
  /** Worker threads; 0 = one per core. */
  concurrency?: number;
  holdApplicationUntilProxyStarts?: boolean;
  /** Extra environment of the agent (`MESH_META_*` become node metadata). */
  proxyMetadata: Readonly<Record<string, string>>;
  tracing?: ProxyTracing;
  statNameLength: number;
  meshId?: string;
  extraStatTags?: readonly string[];
  proxyStatsMatcher?: { inclusionPrefixes?: string[]; inclusionSuffixes?: string[]; inclusionRegexps?: string[] };
  gatewayTopology?: { numTrustedProxies?: number; forwardClientCertDetails?: string };
  image?: { imageType?: string };
  runtimeValues?: Readonly<Record<string, string>>;
}

/** The incumbent's defaults, with the mesh's names (DESIGN.md §1). */
export const DEFAULT_PROXY_CONFIG: ProxyConfig = Object.freeze({
  discoveryAddress: 'meshd.mesh-system.svc:15012',
  binaryPath: '/usr/local/bin/envoy',
  configPath: './etc/mesh/proxy',
  serviceCluster: 'mesh-proxy',
  drainDuration: '45s',
  terminationDrainDuration: '5s',
  interceptionMode: 'REDIRECT',
  controlPlaneAuthPolicy: 'MUTUAL_TLS',
  proxyAdminPort: 15000,
  statusPort: 15020,
  proxyMetadata: Object.freeze({}),
  statNameLength: 189,
}) as ProxyConfig;

const TRACERS = ['zipkin', 'lightstep', 'datadog', 'stackdriver', 'openCensusAgent'] as const;

const KNOWN = new Set([
  'discoveryAddress', 'binaryPath', 'configPath', 'serviceCluster', 'drainDuration', 'terminationDrainDuration', 'parentShutdownDuration',
  'interceptionMode', 'controlPlaneAuthPolicy', 'proxyAdminPort', 'statusPort', 'concurrency', 'holdApplicationUntilProxyStarts',
  'proxyMetadata', 'tracing', 'statNameLength', 'meshId', 'extraStatTags', 'proxyStatsMatcher', 'gatewayTopology', 'image', 'runtimeValues',
]);
/** The incumbent's fields the agent and the built-in proxy do not act on. */
const IGNORED = new Set([
  'tracingServiceName', 'statsdUdpAddress', 'envoyMetricsService', 'envoyAccessLogService', 'envoyMetricsServiceAddress', 'proxyBootstrapTemplatePath',
  'sds', 'readinessProbe', 'privateKeyProvider', 'caCertificatesPem', 'proxyHeaders', 'availabilityZone', 'customConfigFile', 'stat_name_length',
]);

export type ProxyConfigPatch = Partial<ProxyConfig>;

/** `base` with the fields `patch` gives: they replace the base's, but maps (`proxyMetadata`, `runtimeValues`) merge key by key, as the incumbent layers them. */
export function mergeProxyConfig(base: ProxyConfig, patch: ProxyConfigPatch): ProxyConfig {
  const out: ProxyConfig = { ...base, ...patch };
  if (patch.proxyMetadata) out.proxyMetadata = { ...base.proxyMetadata, ...patch.proxyMetadata };
  if (patch.runtimeValues) out.runtimeValues = { ...base.runtimeValues, ...patch.runtimeValues };
  return out;
}

/** The fields of one ProxyConfig document over `base` (see mergeProxyConfig). */
export function applyProxyConfig(base: ProxyConfig, raw: unknown, fields: FieldReader, path: string): ProxyConfig {
  return mergeProxyConfig(base, parseProxyConfigPatch(raw, fields, path));
}

/**
 * The fields one ProxyConfig document gives, checked. `path` prefixes field names in messages
 * (`defaultConfig` in a mesh config, empty for PROXY_CONFIG); unknown fields are warnings.
 */
export function parseProxyConfigPatch(raw: unknown, fields: FieldReader, path: string): ProxyConfigPatch {
  if (raw === undefined || raw === null) return {};
  if (!isMapping(raw)) fields.fail(path, 'must be a mapping of ProxyConfig fields');
  const f = (key: string) => fieldPath(path, key);
  const out: ProxyConfigPatch = {};
  const set = <K extends keyof ProxyConfig>(key: K, value: ProxyConfig[K] | undefined) => {
    if (value !== undefined) out[key] = value;
  };
  for (const key of ['binaryPath', 'configPath', 'serviceCluster'] as const) set(key, fields.string(raw[key], f(key), { nonEmpty: true }));
  const discovery = fields.string(raw.discoveryAddress, f('discoveryAddress'), { nonEmpty: true });
  if (discovery !== undefined) {
    const problem = hostPortProblem(discovery);
    if (problem) fields.fail(f('discoveryAddress'), problem);
    out.discoveryAddress = discovery;
  }
  set('drainDuration', fields.durationText(raw.drainDuration, f('drainDuration')));
  set('terminationDrainDuration', fields.durationText(raw.terminationDrainDuration, f('terminationDrainDuration')));
  if (raw.parentShutdownDuration !== undefined && raw.parentShutdownDuration !== null) {
    fields.durationText(raw.parentShutdownDuration, f('parentShutdownDuration'));
    fields.warn(f('parentShutdownDuration'), 'deprecated and ignored');
  }
  set('interceptionMode', fields.oneOf(raw.interceptionMode, f('interceptionMode'), INTERCEPTION_MODES));
  set('controlPlaneAuthPolicy', fields.oneOf(raw.controlPlaneAuthPolicy, f('controlPlaneAuthPolicy'), ['MUTUAL_TLS', 'NONE'] as const));
  set('proxyAdminPort', fields.port(raw.proxyAdminPort, f('proxyAdminPort'), 0));
  set('statusPort', fields.port(raw.statusPort, f('statusPort'), 0));
  set('concurrency', fields.int(raw.concurrency, f('concurrency'), 0, 1024));
  set('holdApplicationUntilProxyStarts', fields.bool(raw.holdApplicationUntilProxyStarts, f('holdApplicationUntilProxyStarts')));
  set('proxyMetadata', fields.stringMap(raw.proxyMetadata, f('proxyMetadata')));
  if (raw.tracing !== undefined && raw.tracing !== null) out.tracing = tracingOf(raw.tracing, fields, f('tracing'));
  set('statNameLength', fields.int(raw.statNameLength, f('statNameLength'), 0, 10_000));
  set('meshId', fields.string(raw.meshId, f('meshId')));
  set('extraStatTags', fields.stringList(raw.extraStatTags, f('extraStatTags')));
  const matcher = fields.mapping(raw.proxyStatsMatcher, f('proxyStatsMatcher'));
  if (matcher) {
    const m = (k: string) => fields.stringList(matcher[k], fieldPath(f('proxyStatsMatcher'), k));
    out.proxyStatsMatcher = { inclusionPrefixes: m('inclusionPrefixes'), inclusionSuffixes: m('inclusionSuffixes'), inclusionRegexps: m('inclusionRegexps') };
    fields.unknownFields(matcher, f('proxyStatsMatcher'), new Set(['inclusionPrefixes', 'inclusionSuffixes', 'inclusionRegexps']));
  }
  const topology = fields.mapping(raw.gatewayTopology, f('gatewayTopology'));
  if (topology) {
    const p = f('gatewayTopology');
    out.gatewayTopology = {
      numTrustedProxies: fields.int(topology.numTrustedProxies, fieldPath(p, 'numTrustedProxies'), 0, 1_000_000),
      forwardClientCertDetails: fields.oneOf(topology.forwardClientCertDetails, fieldPath(p, 'forwardClientCertDetails'), [
        'UNDEFINED', 'SANITIZE', 'FORWARD_ONLY', 'APPEND_FORWARD', 'SANITIZE_SET', 'ALWAYS_FORWARD_ONLY',
      ] as const),
    };
    fields.unknownFields(topology, p, new Set(['numTrustedProxies', 'forwardClientCertDetails']), new Set(['proxyProtocol']));
  }
  const image = fields.mapping(raw.image, f('image'));
  if (image) out.image = { imageType: fields.string(image.imageType, fieldPath(f('image'), 'imageType')) };
  set('runtimeValues', fields.stringMap(raw.runtimeValues, f('runtimeValues')));
  fields.unknownFields(raw, path, KNOWN, IGNORED);
  return out;
}

function tracingOf(raw: unknown, fields: FieldReader, path: string): ProxyTracing {
  const t = fields.mapping(raw, path)!;
  const out: ProxyTracing = {};
  const sampling = fields.number(t.sampling, fieldPath(path, 'sampling'), 0, 100);
  if (sampling !== undefined) out.sampling = sampling;
  const max = fields.int(t.maxPathTagLength, fieldPath(path, 'maxPathTagLength'), 0, 1_000_000);
  if (max !== undefined) out.maxPathTagLength = max;
  const tags = fields.mapping(t.customTags, fieldPath(path, 'customTags'));
  if (tags) {
    for (const [name, tag] of Object.entries(tags)) {
      if (!isMapping(tag)) fields.fail(fieldPath(fieldPath(path, 'customTags'), name), 'must be a mapping (literal, environment or header)');
    }
    out.customTags = tags;
  }
  const tls = fields.mapping(t.tlsSettings, fieldPath(path, 'tlsSettings'));
  if (tls) out.tlsSettings = tls;
  const given = TRACERS.filter((k) => t[k] !== undefined && t[k] !== null);
  if (given.length > 1) fields.fail(path, `sets ${given.join(' and ')}: only one tracer may be set`);
  for (const kind of given) {
    const tp = fieldPath(path, kind);
    const settings = fields.mapping(t[kind], tp)!;
    const address = fields.string(settings.address, fieldPath(tp, 'address'));
    if (address !== undefined) {
      // `$(HOST_IP)` is filled in by the agent; check the address with a placeholder IP.
      const problem = hostPortProblem(address.replace('$(HOST_IP)', '127.0.0.1'));
      if (problem) fields.fail(fieldPath(tp, 'address'), problem);
    } else if (kind === 'zipkin' || kind === 'datadog' || kind === 'lightstep') {
      fields.fail(fieldPath(tp, 'address'), 'is required');
    }
    if (kind === 'lightstep' && fields.string(settings.accessToken, fieldPath(tp, 'accessToken'), { nonEmpty: true }) === undefined) {
      fields.fail(fieldPath(tp, 'accessToken'), 'is required');
    }
    out.tracer = { kind, address, settings };
  }
  fields.unknownFields(t, path, new Set(['sampling', 'maxPathTagLength', 'customTags', 'tlsSettings', ...TRACERS]), new Set(['enableIstioTags']));
  return out;
}
