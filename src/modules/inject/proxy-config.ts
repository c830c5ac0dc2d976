import { parse } from 'yaml';
import { DEFAULT_MESH_CONFIG, parseMeshConfig } from '../mesh-config';
import { UserError } from '../shared/user-error';
import { goJSON } from './go-json';
import { MESH_CONFIG, PROXY_CONFIG } from './go-types';
import { GoNil, GoStruct } from './template';

/**
 * The mesh config as the injector needs it: the whole document (the templates read fields the
 * mesh-config area does not model yet, such as `defaultConfig` and `proxyListenPort`), over
 * the built-in defaults. The mesh-config area's parser validates the fields it knows; this
 * adapter is the only place the injector touches it.
 */

export class InjectionConfigError extends UserError {}

type JsonMap = Record<string, unknown>;

/** The proxy config defaults (the incumbent's DefaultProxyConfig, renamed). */
export function defaultProxyConfig(): JsonMap {
  return {
    configPath: './etc/mesh/proxy',
    binaryPath: '/usr/local/bin/envoy',
    serviceCluster: 'mesh-proxy',
    drainDuration: '45s',
    terminationDrainDuration: '5s',
    discoveryAddress: 'meshd.mesh-system.svc:15012',
    controlPlaneAuthPolicy: 'MUTUAL_TLS',
    tracing: { zipkin: { address: 'zipkin.mesh-system:9411' } },
    proxyAdminPort: 15000,
    statNameLength: 189,
    statusPort: 15020,
    concurrency: 2,
  };
}

/** The mesh config defaults the templates and the injector read. */
export function defaultMeshConfig(): JsonMap {
  return {
    // The mesh's own defaults, defined once in mesh-config.
    proxyListenPort: DEFAULT_MESH_CONFIG.proxyListenPort,
    proxyInboundListenPort: DEFAULT_MESH_CONFIG.proxyInboundListenPort,
    trustDomain: DEFAULT_MESH_CONFIG.trustDomain,
    trustDomainAliases: [],
    rootNamespace: DEFAULT_MESH_CONFIG.rootNamespace,
    enableAutoMtls: DEFAULT_MESH_CONFIG.enableAutoMtls,
    enablePrometheusMerge: DEFAULT_MESH_CONFIG.enablePrometheusMerge,
    ingressClass: DEFAULT_MESH_CONFIG.ingressClass,
    ingressService: DEFAULT_MESH_CONFIG.ingressService,
    defaultConfig: defaultProxyConfig(),
  };
}

const isMap = (v: unknown): v is JsonMap => typeof v === 'object' && v !== null && !Array.isArray(v);

/** Proto-style merge: messages (maps) merge field by field, everything else is replaced. */
export function mergeOver(base: JsonMap, over: JsonMap): JsonMap {
  const out: JsonMap = { ...base };
  for (const [k, v] of Object.entries(over)) {
    if (v === null || v === undefined) continue;
    out[k] = isMap(v) && isMap(out[k]) ? mergeOver(out[k] as JsonMap, v) : v;
  }
  return out;
}

/** The mesh config of the injector: the document over the defaults, its `defaultConfig` over the proxy defaults. */
export class InjectionMeshConfig {
  private constructor(readonly data: JsonMap) {}

  static defaults(): InjectionMeshConfig {
    return new InjectionMeshConfig(defaultMeshConfig());
  }

  /** Parses mesh config YAML; `where` names the source in errors (a file, a config map). */
  static parse(text: string, where: string): InjectionMeshConfig {
    // The mesh-config area validates the fields it models (trust domain, root namespace...).
    parseMeshConfig(text, where);
    let doc: unknown;
    try {
      doc = parse(text, { maxAliasCount: 100 });
    } catch (err) {
      throw new InjectionConfigError(`${where}: not valid YAML: ${String((err as Error).message).split('\n')[0]}`);
    }
    if (doc === null || doc === undefined) return InjectionMeshConfig.defaults();
    if (!isMap(doc)) throw new InjectionConfigError(`${where}: must be a mapping of mesh config fields`);
    if (doc.defaultConfig !== undefined && doc.defaultConfig !== null && !isMap(doc.defaultConfig)) {
      throw new InjectionConfigError(`${where}: defaultConfig: must be a mapping of proxy config fields`);
    }
    return new InjectionMeshConfig(mergeOver(defaultMeshConfig(), doc));
  }

  /** This mesh config with a pod's `proxy.mesh.io/config` (proxy config YAML) over its defaultConfig. */
  withProxyConfigOverride(yamlText: string, where: string): InjectionMeshConfig {
    let doc: unknown;
    try {
      doc = parse(yamlText, { maxAliasCount: 100 });
    } catch (err) {
      throw new InjectionConfigError(`${where}: not valid YAML: ${String((err as Error).message).split('\n')[0]}`);
    }
    if (doc === null || doc === undefined) return this;
    if (!isMap(doc)) throw new InjectionConfigError(`${where}: must be a mapping of proxy config fields`);
    return new InjectionMeshConfig({ ...this.data, defaultConfig: mergeOver(this.proxyConfig, doc) });
  }

  get proxyConfig(): JsonMap {
    return isMap(this.data.defaultConfig) ? this.data.defaultConfig : defaultProxyConfig();
  }

  get statusPort(): number {
    const port = this.proxyConfig.statusPort;
    return typeof port === 'number' ? port : 15020;
  }

  get holdApplicationUntilProxyStarts(): boolean {
    return this.proxyConfig.holdApplicationUntilProxyStarts === true;
  }

  get interceptionMode(): string {
    return typeof this.proxyConfig.interceptionMode === 'string' ? this.proxyConfig.interceptionMode : 'REDIRECT';
  }

  /** `enablePrometheusMerge` (on unless the mesh config turns it off). */
  get prometheusMerge(): boolean {
    return this.data.enablePrometheusMerge !== false;
  }

  get inboundTrafficPolicyMode(): string {
    const policy = this.data.inboundTrafficPolicy;
    return isMap(policy) && policy.mode === 'LOCALHOST' ? 'localhost' : 'passthrough';
  }

  /** The template's `.MeshConfig`. */
  asGoValue(): GoStruct {
    return new GoStruct(MESH_CONFIG, this.data);
  }

  /** The template's `.ProxyConfig`. */
  proxyConfigGoValue(): GoStruct {
    return new GoStruct(PROXY_CONFIG, this.proxyConfig);
  }
}

/** Fields the incumbent drops from PROXY_CONFIG when they equal the defaults (its cleanProxyConfig). */
const CLEANED = [
  'configPath',
  'binaryPath',
  'controlPlaneAuthPolicy',
  'serviceCluster',
  'drainDuration',
  'terminationDrainDuration',
  'parentShutdownDuration',
  'discoveryAddress',
  'envoyMetricsService',
  'envoyAccessLogService',
  'tracing',
  'proxyAdminPort',
  'statNameLength',
  'statusPort',
  'concurrency',
];

/** Proto3 zero values, which proto JSON leaves out. */
function isProtoZero(key: string, v: unknown): boolean {
  if (v === null || v === undefined || v === 0 || v === '' || v === false) return true;
  if (Array.isArray(v)) return v.length === 0;
  if (key === 'interceptionMode') return v === 'REDIRECT';
  if (key === 'proxyMetadata' && isMap(v)) return Object.keys(v).length === 0;
  return false;
}

/** The template's `protoToJSON`: the proxy config without default-valued fields, as compact proto JSON. */
export function protoToJSON(v: unknown): string {
  if (v === null || v === undefined || v instanceof GoNil) return '{}';
  if (!(v instanceof GoStruct)) return '{}';
  const defaults = v.type === PROXY_CONFIG ? defaultProxyConfig() : {};
  const out: JsonMap = {};
  for (const [key, value] of Object.entries(v.data)) {
    if (CLEANED.includes(key) && key in defaults && sameJSON(value, defaults[key])) continue;
    if (isProtoZero(key, value)) continue;
    out[key] = value;
  }
  return goJSON(out);
}

function sameJSON(a: unknown, b: unknown): boolean {
  return JSON.stringify(sortKeys(a)) === JSON.stringify(sortKeys(b));
}

function sortKeys(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(sortKeys);
  if (isMap(v)) return Object.fromEntries(Object.keys(v).sort().map((k) => [k, sortKeys(v[k])]));
  return v;
}
