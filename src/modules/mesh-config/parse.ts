/**
 * One mesh config document (a `--meshConfig` file, the orchestrator `mesh` ConfigMap's text)
 * → a layer: the fields it sets, checked. Layers apply over the defaults in order, with the
 * incumbent's merge rules (mergeMeshConfig).
 */
import { DEFAULT_CONFIG_FILE_LIMITS, parseConfigDocuments } from '../config';
import { mergeExtensionProviders, parseExtensionProviders, PROVIDER_PURPOSE, ExtensionProvider } from './extension-providers';
import { FieldReader, fieldPath, isMapping, isTrustDomain, Mapping, MeshConfigError } from './fields';
import { mergeProxyConfig, parseProxyConfigPatch, ProxyConfig, ProxyConfigPatch } from './proxy-config';
import {
  CaCertificate,
  DEFAULT_MESH_CONFIG,
  deepFreeze,
  DefaultProviders,
  INGRESS_CONTROLLER_MODES,
  LabelSelector,
  LocalityLbSetting,
  MeshConfigValues,
  PATH_NORMALIZATION_MODES,
  PathNormalizationMode,
  TLS_PROTOCOL_VERSIONS,
} from './values';

/** What one document sets; absent fields keep what the layers below say. */
export type MeshConfigLayer = { -readonly [K in keyof Omit<MeshConfigValues, 'defaultConfig' | 'defaultProviders'>]?: MeshConfigValues[K] } & {
  defaultConfig?: ProxyConfigPatch;
  defaultProviders?: Partial<DefaultProviders>;
};

export interface ParsedLayer {
  layer: MeshConfigLayer;
  /** Unknown or ignored fields, providers that cannot be used: each names the source and field. */
  warnings: string[];
}

/** A mesh config document may not be bigger than this (it is a few kilobytes in practice). */
export const MESH_CONFIG_MAX_BYTES = 1024 * 1024;

const KNOWN = new Set([
  'trustDomain', 'trustDomainAliases', 'rootNamespace', 'defaultConfig', 'outboundTrafficPolicy', 'enableAutoMtls', 'extensionProviders',
  'defaultProviders', 'ingressClass', 'ingressService', 'ingressControllerMode', 'ingressSelector', 'accessLogFile', 'accessLogEncoding',
  'accessLogFormat', 'pathNormalization', 'connectTimeout', 'protocolDetectionTimeout', 'enableTracing', 'localityLbSetting', 'dnsRefreshRate',
  'discoverySelectors', 'meshMTLS', 'caCertificates', 'proxyListenPort', 'proxyInboundListenPort', 'enablePrometheusMerge',
]);
/** The incumbent's fields this mesh reads but does not act on. */
const IGNORED = new Set([
  'enableEnvoyAccessLogService', 'defaultServiceExportTo', 'defaultVirtualServiceExportTo', 'defaultDestinationRuleExportTo', 'serviceSettings',
  'h2UpgradePolicy', 'inboundClusterStatName', 'outboundClusterStatName', 'certificates', 'thriftConfig', 'tcpKeepalive', 'inboundTrafficPolicy',
  'verifyCertificateAtClient', 'tlsDefaults', 'serviceScopeConfigs', 'proxyHttpPort', 'accessLogFilter', 'configSources', 'mixerCheckServer',
  'reportBatchMaxEntries', 'reportBatchMaxTime', 'disablePolicyChecks', 'sdsUdsPath', 'enableSdsTokenMount', 'localityLbSettings', 'outboundTrafficPolicyMode',
]);

/** Parses one document; throws MeshConfigError naming `where` and the field. */
export function parseMeshConfigLayer(text: string, where: string): ParsedLayer {
  const fields = new FieldReader(where);
  const doc = documentOf(text, where);
  if (doc === undefined) return { layer: {}, warnings: [] };
  const layer = layerOf(doc, fields);
  return { layer: deepFreeze(layer), warnings: fields.warnings };
}

/** The mesh config of one document over `base` (the defaults unless given). */
export function parseMeshConfig(text: string, where: string, base: MeshConfigValues = DEFAULT_MESH_CONFIG): MeshConfigValues {
  return mergeMeshConfig(base, parseMeshConfigLayer(text, where).layer);
}

/**
 * `base` with a layer applied, as the incumbent layers mesh configs: fields override, except
 * `defaultConfig` (field by field, proxyMetadata key by key), `defaultProviders` (per
 * purpose), `extensionProviders` (by name: replaced or appended) and `trustDomainAliases`
 * (the union, sorted).
 */
export function mergeMeshConfig(base: MeshConfigValues, layer: MeshConfigLayer): MeshConfigValues {
  const { defaultConfig, defaultProviders, extensionProviders, trustDomainAliases, ...rest } = layer;
  const out: MeshConfigValues = {
    ...base,
    ...rest,
    defaultConfig: defaultConfig ? mergeProxyConfig(base.defaultConfig, defaultConfig) : base.defaultConfig,
    defaultProviders: defaultProviders ? { ...base.defaultProviders, ...defaultProviders } : base.defaultProviders,
    extensionProviders: extensionProviders ? mergeExtensionProviders(base.extensionProviders, extensionProviders) : base.extensionProviders,
    trustDomainAliases: trustDomainAliases ? [...new Set([...base.trustDomainAliases, ...trustDomainAliases])].sort() : base.trustDomainAliases,
  };
  return deepFreeze(out);
}

/**
 * A ProxyConfig document (`PROXY_CONFIG`, the `proxy.mesh.io/config` annotation) over `base`:
 * its fields replace the base's, proxyMetadata merges. Throws MeshConfigError naming `where`.
 */
export function parseProxyConfig(text: string, where: string, base: ProxyConfig): { config: ProxyConfig; warnings: string[] } {
  const fields = new FieldReader(where);
  const doc = documentOf(text, where, 'a mapping of ProxyConfig fields');
  if (doc === undefined) return { config: base, warnings: [] };
  return { config: mergeProxyConfig(base, parseProxyConfigPatch(doc, fields, '')), warnings: fields.warnings };
}

/**
 * The one YAML (or JSON) document of `text` as a mapping, or undefined when empty; the
 * config files' YAML limits guard against hostile text. Throws MeshConfigError naming `where`.
 */
export function documentOf(text: string, where: string, what = 'a mapping of mesh config fields'): Mapping | undefined {
  const bytes = Buffer.from(text, 'utf8');
  if (bytes.length > MESH_CONFIG_MAX_BYTES) throw new MeshConfigError(`${where}: ${bytes.length} bytes is more than the ${MESH_CONFIG_MAX_BYTES} a mesh config may have`);
  const parsed = parseConfigDocuments(where, bytes, { ...DEFAULT_CONFIG_FILE_LIMITS, maxBytes: MESH_CONFIG_MAX_BYTES, maxDocuments: 2 });
  if (parsed.issues.length > 0) {
    const issue = parsed.issues[0];
    const line = issue.location.line !== undefined ? `line ${issue.location.line}: ` : '';
    throw new MeshConfigError(`${where}: not valid YAML: ${line}${issue.message.split('\n')[0]}`);
  }
  const docs = parsed.documents.filter((d) => d.value !== null && d.value !== undefined);
  if (docs.length === 0) return undefined;
  if (docs.length > 1) throw new MeshConfigError(`${where}: holds ${docs.length} YAML documents, not one`);
  if (!isMapping(docs[0].value)) throw new MeshConfigError(`${where}: must be ${what}`);
  return docs[0].value;
}

function layerOf(doc: Mapping, fields: FieldReader): MeshConfigLayer {
  const out: MeshConfigLayer = {};
  const set = <K extends keyof MeshConfigLayer>(key: K, value: MeshConfigLayer[K] | undefined) => {
    if (value !== undefined) out[key] = value;
  };
  const trustDomain = (value: unknown, path: string) => {
    const td = fields.string(value, path, { nonEmpty: true });
    if (td !== undefined && !isTrustDomain(td)) fields.fail(path, `${JSON.stringify(td)} is not a valid trust domain (DNS labels separated by dots)`);
    return td;
  };
  set('trustDomain', trustDomain(doc.trustDomain, 'trustDomain'));
  set('trustDomainAliases', fields.stringList(doc.trustDomainAliases, 'trustDomainAliases', (alias, path) => trustDomain(alias, path)));
  const rootNamespace = fields.string(doc.rootNamespace, 'rootNamespace', { nonEmpty: true });
  set('rootNamespace', rootNamespace);
  if (doc.defaultConfig !== undefined && doc.defaultConfig !== null) out.defaultConfig = parseProxyConfigPatch(doc.defaultConfig, fields, 'defaultConfig');
  const otp = fields.mapping(doc.outboundTrafficPolicy, 'outboundTrafficPolicy');
  if (otp) {
    const mode = fields.oneOf(otp.mode, 'outboundTrafficPolicy.mode', ['ALLOW_ANY', 'REGISTRY_ONLY'] as const);
    if (mode) out.outboundTrafficPolicy = { mode };
    fields.unknownFields(otp, 'outboundTrafficPolicy', new Set(['mode']), new Set(['egressProxy']));
  }
  set('enableAutoMtls', fields.bool(doc.enableAutoMtls, 'enableAutoMtls'));
  set('extensionProviders', parseExtensionProviders(doc.extensionProviders, fields, 'extensionProviders'));
  set('defaultProviders', defaultProvidersOf(doc.defaultProviders, fields));
  set('ingressClass', fields.string(doc.ingressClass, 'ingressClass'));
  set('ingressService', fields.string(doc.ingressService, 'ingressService'));
  set('ingressSelector', fields.string(doc.ingressSelector, 'ingressSelector'));
  set('ingressControllerMode', fields.oneOf(doc.ingressControllerMode, 'ingressControllerMode', INGRESS_CONTROLLER_MODES));
  set('accessLogFile', fields.string(doc.accessLogFile, 'accessLogFile'));
  set('accessLogEncoding', fields.oneOf(doc.accessLogEncoding, 'accessLogEncoding', ['TEXT', 'JSON'] as const));
  set('accessLogFormat', fields.string(doc.accessLogFormat, 'accessLogFormat'));
  set('pathNormalization', normalizationOf(doc.pathNormalization, fields));
  // The incumbent's bounds: a connect timeout from 1 ms to 1 h, to the millisecond.
  set('connectTimeoutMs', millis(fields, doc.connectTimeout, 'connectTimeout', { min: 1, max: 3_600_000 }));
  set('protocolDetectionTimeoutMs', millis(fields, doc.protocolDetectionTimeout, 'protocolDetectionTimeout', {}));
  set('enableTracing', fields.bool(doc.enableTracing, 'enableTracing'));
  set('localityLbSetting', localityLbOf(doc.localityLbSetting, fields));
  set('dnsRefreshRateMs', millis(fields, doc.dnsRefreshRate, 'dnsRefreshRate', { min: 1 }));
  set('discoverySelectors', discoverySelectorsOf(doc.discoverySelectors, fields));
  const mtls = fields.mapping(doc.meshMTLS, 'meshMTLS');
  if (mtls) {
    if (mtls.ecdhCurves !== undefined) fields.fail('meshMTLS.ecdhCurves', 'mesh TLS does not support ECDH curves configuration');
    const version = fields.oneOf(mtls.minProtocolVersion, 'meshMTLS.minProtocolVersion', TLS_PROTOCOL_VERSIONS);
    out.meshMTLS = { minProtocolVersion: version ?? 'TLS_AUTO' };
    fields.unknownFields(mtls, 'meshMTLS', new Set(['minProtocolVersion', 'ecdhCurves']), new Set(['cipherSuites']));
  }
  set('caCertificates', caCertificatesOf(doc.caCertificates, fields));
  set('proxyListenPort', fields.port(doc.proxyListenPort, 'proxyListenPort'));
  set('proxyInboundListenPort', fields.port(doc.proxyInboundListenPort, 'proxyInboundListenPort'));
  set('enablePrometheusMerge', fields.bool(doc.enablePrometheusMerge, 'enablePrometheusMerge'));
  fields.unknownFields(doc, '', KNOWN, IGNORED);
  if (out.defaultProviders) checkDefaultProviders(out.defaultProviders, out.extensionProviders, fields);
  return out;
}

function millis(fields: FieldReader, value: unknown, path: string, range: { min?: number; max?: number }): number | undefined {
  const ms = fields.durationMs(value, path, range);
  if (ms !== undefined && !Number.isInteger(ms)) fields.fail(path, 'only durations to the millisecond are supported');
  return ms;
}

function normalizationOf(value: unknown, fields: FieldReader): PathNormalizationMode | undefined {
  const map = fields.mapping(value, 'pathNormalization', 'a mapping (normalization: <mode>)');
  if (map === undefined) return undefined;
  fields.unknownFields(map, 'pathNormalization', new Set(['normalization']));
  const mode = map.normalization;
  if (mode === undefined || mode === null) return undefined;
  if (typeof mode !== 'string') return fields.fail('pathNormalization.normalization', 'must be a string');
  if (!(PATH_NORMALIZATION_MODES as readonly string[]).includes(mode)) {
    fields.fail('pathNormalization.normalization', `unknown mode ${JSON.stringify(mode)} (one of ${PATH_NORMALIZATION_MODES.join(', ')})`);
  }
  return mode as PathNormalizationMode;
}

function defaultProvidersOf(value: unknown, fields: FieldReader): Partial<DefaultProviders> | undefined {
  const map = fields.mapping(value, 'defaultProviders');
  if (map === undefined) return undefined;
  const out: Partial<DefaultProviders> = {};
  for (const purpose of ['tracing', 'metrics', 'accessLogging'] as const) {
    const list = fields.stringList(map[purpose], fieldPath('defaultProviders', purpose));
    if (list) out[purpose] = list;
  }
  fields.unknownFields(map, 'defaultProviders', new Set(['tracing', 'metrics', 'accessLogging']));
  return out;
}

/** A default provider that names no provider of this document or the built-in ones is kept, with a warning (a later layer may define it). */
function checkDefaultProviders(defaults: Partial<DefaultProviders>, declared: readonly ExtensionProvider[] | undefined, fields: FieldReader): void {
  const known = [...(declared ?? []), ...DEFAULT_MESH_CONFIG.extensionProviders];
  for (const purpose of ['tracing', 'metrics', 'accessLogging'] as const) {
    (defaults[purpose] ?? []).forEach((name, i) => {
      const provider = known.find((p) => p.name === name);
      const path = fieldPath(fieldPath('defaultProviders', purpose), i);
      if (!provider) fields.warn(path, `no extension provider is named ${JSON.stringify(name)}`);
      else if (!PROVIDER_PURPOSE[purpose].includes(provider.kind)) fields.warn(path, `provider ${JSON.stringify(name)} is ${provider.kind}, not a ${purpose} provider`);
    });
  }
}

function localityLbOf(value: unknown, fields: FieldReader): LocalityLbSetting | undefined {
  const path = 'localityLbSetting';
  const map = fields.mapping(value, path);
  if (map === undefined) return undefined;
  const out: { -readonly [K in keyof LocalityLbSetting]: LocalityLbSetting[K] } = {};
  const enabled = fields.bool(map.enabled, fieldPath(path, 'enabled'));
  if (enabled !== undefined) out.enabled = enabled;
  const distribute = fields.list(map.distribute, fieldPath(path, 'distribute'));
  const failover = fields.list(map.failover, fieldPath(path, 'failover'));
  if (distribute?.length && failover?.length) fields.fail(path, "can not simultaneously specify 'distribute' and 'failover'");
  if (distribute) {
    out.distribute = distribute.map((d, i) => {
      const p = fieldPath(fieldPath(path, 'distribute'), i);
      const m = fields.mapping(d, p) ?? fields.fail(p, 'must be a mapping (from, to)');
      const from = fields.string(m.from, fieldPath(p, 'from'), { nonEmpty: true }) ?? fields.fail(fieldPath(p, 'from'), 'is required');
      const toMap = fields.mapping(m.to, fieldPath(p, 'to')) ?? fields.fail(fieldPath(p, 'to'), 'is required');
      const to: Record<string, number> = {};
      let total = 0;
      for (const [loc, w] of Object.entries(toMap)) {
        to[loc] = fields.int(w, fieldPath(fieldPath(p, 'to'), loc), 1, 100)!;
        total += to[loc];
        checkLocality(loc, fieldPath(fieldPath(p, 'to'), loc), fields);
      }
      if (total !== 100) fields.fail(fieldPath(p, 'to'), `total locality weight ${total} != 100`);
      checkLocality(from, fieldPath(p, 'from'), fields);
      return { from, to };
    });
  }
  if (failover) {
    out.failover = failover.map((item, i) => {
      const p = fieldPath(fieldPath(path, 'failover'), i);
      const m = fields.mapping(item, p) ?? fields.fail(p, 'must be a mapping (from, to)');
      const from = fields.string(m.from, fieldPath(p, 'from'), { nonEmpty: true }) ?? fields.fail(fieldPath(p, 'from'), 'is required');
      const to = fields.string(m.to, fieldPath(p, 'to'), { nonEmpty: true }) ?? fields.fail(fieldPath(p, 'to'), 'is required');
      if (from === to) fields.fail(p, 'locality lb failover settings must specify different regions');
      if (from.includes('/') || to.includes('/')) fields.fail(p, 'locality lb failover only specify region');
      if (from.includes('*') || to.includes('*')) fields.fail(p, "locality lb failover region should not contain '*' wildcard");
      return { from, to };
    });
  }
  const priority = fields.stringList(map.failoverPriority, fieldPath(path, 'failoverPriority'));
  if (priority) out.failoverPriority = priority;
  fields.unknownFields(map, path, new Set(['enabled', 'distribute', 'failover', 'failoverPriority']));
  return out;
}

/** `region/zone/subzone`, each part non-empty, at most one `*` and only at the end. */
function checkLocality(locality: string, path: string, fields: FieldReader): void {
  const stars = locality.split('*').length - 1;
  if (stars > 1 || (stars === 1 && !locality.endsWith('*'))) fields.fail(path, `locality ${locality} wildcard '*' number can not exceed 1 and must be in the end`);
  if (locality.split('/', 3).some((part) => part === '')) fields.fail(path, `locality ${locality} must not contain empty region/zone/subzone info`);
}

function discoverySelectorsOf(value: unknown, fields: FieldReader): LabelSelector[] | undefined {
  const list = fields.list(value, 'discoverySelectors', 'a list of label selectors');
  if (list === undefined) return undefined;
  return list.map((item, i) => {
    const p = fieldPath('discoverySelectors', i);
    const m = fields.mapping(item, p) ?? fields.fail(p, 'must be a label selector (matchLabels, matchExpressions)');
    const selector: { matchLabels?: Record<string, string>; matchExpressions?: LabelSelector['matchExpressions'] } = {};
    const labels = fields.stringMap(m.matchLabels, fieldPath(p, 'matchLabels'));
    if (labels) selector.matchLabels = labels;
    const expressions = fields.list(m.matchExpressions, fieldPath(p, 'matchExpressions'));
    if (expressions) {
      selector.matchExpressions = expressions.map((e, j) => {
        const ep = fieldPath(fieldPath(p, 'matchExpressions'), j);
        const expr = fields.mapping(e, ep) ?? fields.fail(ep, 'must be a mapping (key, operator, values)');
        const key = fields.string(expr.key, fieldPath(ep, 'key'), { nonEmpty: true }) ?? fields.fail(fieldPath(ep, 'key'), 'is required');
        const operator = (['In', 'NotIn', 'Exists', 'DoesNotExist'] as const).find((o) => o === expr.operator);
        if (!operator) fields.fail(fieldPath(ep, 'operator'), `must be one of In, NotIn, Exists, DoesNotExist, not ${JSON.stringify(expr.operator)}`);
        const values = fields.stringList(expr.values, fieldPath(ep, 'values'));
        if ((operator === 'In' || operator === 'NotIn') && !values?.length) fields.fail(fieldPath(ep, 'values'), `must not be empty for operator ${operator}`);
        if ((operator === 'Exists' || operator === 'DoesNotExist') && values?.length) fields.fail(fieldPath(ep, 'values'), `must be empty for operator ${operator}`);
        return values ? { key, operator, values } : { key, operator };
      });
    }
    fields.unknownFields(m, p, new Set(['matchLabels', 'matchExpressions']));
    return selector;
  });
}

function caCertificatesOf(value: unknown, fields: FieldReader): CaCertificate[] | undefined {
  const list = fields.list(value, 'caCertificates', 'a list of certificates');
  if (list === undefined) return undefined;
  return list.map((item, i) => {
    const p = fieldPath('caCertificates', i);
    const m = fields.mapping(item, p) ?? fields.fail(p, 'must be a mapping (pem or spiffeBundleUrl, certSigners, trustDomains)');
    const pem = fields.string(m.pem, fieldPath(p, 'pem'));
    const url = fields.string(m.spiffeBundleUrl, fieldPath(p, 'spiffeBundleUrl'));
    if (pem !== undefined && url !== undefined) fields.fail(p, 'sets pem and spiffeBundleUrl: only one may be set');
    if (pem === undefined && url === undefined) fields.fail(p, 'needs pem or spiffeBundleUrl');
    if (pem !== undefined && !/-----BEGIN CERTIFICATE-----[\s\S]+?-----END CERTIFICATE-----/.test(pem)) fields.fail(fieldPath(p, 'pem'), 'holds no PEM certificate');
    if (url !== undefined && !URL.canParse(url)) fields.fail(fieldPath(p, 'spiffeBundleUrl'), `${JSON.stringify(url)} is not a URL`);
    const out: { -readonly [K in keyof CaCertificate]: CaCertificate[K] } = pem !== undefined ? { pem } : { spiffeBundleUrl: url };
    const signers = fields.stringList(m.certSigners, fieldPath(p, 'certSigners'));
    if (signers) out.certSigners = signers;
    const domains = fields.stringList(m.trustDomains, fieldPath(p, 'trustDomains'), (td, tp) => {
      if (!isTrustDomain(td)) fields.fail(tp, `${JSON.stringify(td)} is not a valid trust domain (DNS labels separated by dots)`);
    });
    if (domains) out.trustDomains = domains;
    fields.unknownFields(m, p, new Set(['pem', 'spiffeBundleUrl', 'certSigners', 'trustDomains']));
    return out;
  });
}
