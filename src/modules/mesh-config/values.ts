/**
 * The mesh config the daemon acts on: the incumbent's MeshConfig fields that matter here,
 * under the same names (durations in milliseconds), with the incumbent's defaults.
 */
import { DEFAULT_EXTENSION_PROVIDERS, ExtensionProvider } from './extension-providers';
import { DEFAULT_PROXY_CONFIG, ProxyConfig } from './proxy-config';

/** `pathNormalization.normalization`: how proxies normalize request paths before RBAC and routing. */
export const PATH_NORMALIZATION_MODES = ['NONE', 'BASE', 'DEFAULT', 'MERGE_SLASHES', 'DECODE_AND_MERGE_SLASHES'] as const;
export type PathNormalizationMode = (typeof PATH_NORMALIZATION_MODES)[number];
export const DEFAULT_PATH_NORMALIZATION: PathNormalizationMode = 'BASE';

export type OutboundTrafficMode = 'ALLOW_ANY' | 'REGISTRY_ONLY';
export const INGRESS_CONTROLLER_MODES = ['UNSPECIFIED', 'OFF', 'DEFAULT', 'STRICT'] as const;
export type IngressControllerMode = (typeof INGRESS_CONTROLLER_MODES)[number];
export const TLS_PROTOCOL_VERSIONS = ['TLS_AUTO', 'TLSV1_2', 'TLSV1_3'] as const;

/** `localityLbSetting` (the DestinationRule's LocalityLoadBalancerSetting). */
export interface LocalityLbSetting {
  enabled?: boolean;
  distribute?: readonly { from: string; to: Readonly<Record<string, number>> }[];
  failover?: readonly { from: string; to: string }[];
  failoverPriority?: readonly string[];
}

/** An orchestrator label selector, as `discoverySelectors` holds them. */
export interface LabelSelector {
  matchLabels?: Readonly<Record<string, string>>;
  matchExpressions?: readonly { key: string; operator: 'In' | 'NotIn' | 'Exists' | 'DoesNotExist'; values?: readonly string[] }[];
}

/** One `caCertificates` entry: extra trust anchors (a PEM or a SPIFFE bundle URL) and whom they apply to. */
export interface CaCertificate {
  pem?: string;
  spiffeBundleUrl?: string;
  certSigners?: readonly string[];
  trustDomains?: readonly string[];
}

export interface DefaultProviders {
  tracing: readonly string[];
  metrics: readonly string[];
  accessLogging: readonly string[];
}

export interface MeshConfigValues {
  /** The mesh's SPIFFE trust domain (`spiffe://<trustDomain>/ns/<ns>/sa/<sa>`). */
  readonly trustDomain: string;
  /** Former or other trust domains whose identities count as the trust domain's. */
  readonly trustDomainAliases: readonly string[];
  /** Where mesh-wide policies live (a policy there with no selector applies to every workload). */
  readonly rootNamespace: string;
  /** The proxies' ProxyConfig, before their own PROXY_CONFIG and annotation. */
  readonly defaultConfig: ProxyConfig;
  /** Where sidecars send traffic for hosts the registry does not know. */
  readonly outboundTrafficPolicy: { readonly mode: OutboundTrafficMode };
  /** Clients use mutual TLS towards endpoints that accept it, without a DestinationRule saying so. */
  readonly enableAutoMtls: boolean;
  readonly extensionProviders: readonly ExtensionProvider[];
  readonly defaultProviders: DefaultProviders;
  readonly ingressClass: string;
  readonly ingressService: string;
  readonly ingressControllerMode: IngressControllerMode;
  readonly ingressSelector: string;
  readonly accessLogFile: string;
  readonly accessLogEncoding: 'TEXT' | 'JSON';
  readonly accessLogFormat: string;
  readonly pathNormalization: PathNormalizationMode;
  /** Cluster connect timeout, unless a DestinationRule sets one. */
  readonly connectTimeoutMs: number;
  /** 0 = no protocol sniffing timeout. */
  readonly protocolDetectionTimeoutMs: number;
  readonly enableTracing: boolean;
  readonly localityLbSetting: LocalityLbSetting;
  /** DNS refresh of DNS-resolved clusters when resolution fails. */
  readonly dnsRefreshRateMs: number;
  /** Which namespaces the orchestrator registry and config source read; empty = all. */
  readonly discoverySelectors: readonly LabelSelector[];
  readonly meshMTLS: { readonly minProtocolVersion: (typeof TLS_PROTOCOL_VERSIONS)[number] };
  readonly caCertificates: readonly CaCertificate[];
  readonly proxyListenPort: number;
  readonly proxyInboundListenPort: number;
  readonly enablePrometheusMerge: boolean;
}

export const DEFAULT_MESH_CONFIG: MeshConfigValues = deepFreeze({
  trustDomain: 'cluster.local',
  trustDomainAliases: [],
  rootNamespace: 'mesh-system',
  defaultConfig: DEFAULT_PROXY_CONFIG,
  outboundTrafficPolicy: { mode: 'ALLOW_ANY' },
  enableAutoMtls: true,
  extensionProviders: DEFAULT_EXTENSION_PROVIDERS,
  defaultProviders: { tracing: [], metrics: [], accessLogging: [] },
  ingressClass: 'mesh',
  ingressService: 'mesh-ingressgateway',
  ingressControllerMode: 'STRICT',
  ingressSelector: '',
  accessLogFile: '',
  accessLogEncoding: 'TEXT',
  accessLogFormat: '',
  pathNormalization: DEFAULT_PATH_NORMALIZATION,
  connectTimeoutMs: 10_000,
  protocolDetectionTimeoutMs: 0,
  enableTracing: true,
  localityLbSetting: { enabled: true },
  dnsRefreshRateMs: 60_000,
  discoverySelectors: [],
  meshMTLS: { minProtocolVersion: 'TLS_AUTO' },
  caCertificates: [],
  proxyListenPort: 15001,
  proxyInboundListenPort: 15006,
  enablePrometheusMerge: true,
} as MeshConfigValues);

/** Values are shared by every reader of the live config, so nothing may change them. */
export function deepFreeze<T>(value: T): T {
  if (value && typeof value === 'object') {
    // Children too when the object itself is frozen already (a shallowly frozen default).
    Object.freeze(value);
    for (const v of Object.values(value)) deepFreeze(v);
  }
  return value;
}
