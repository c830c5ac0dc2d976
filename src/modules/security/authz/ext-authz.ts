/**
 * The mesh config's external authorizers (`extensionProviders` of kind envoyExtAuthzHttp and
 * envoyExtAuthzGrpc) as the `ext_authz` filters CUSTOM AuthorizationPolicies put on a
 * workload's inbound chains, built the incumbent's way: the check goes to the provider's
 * service through its outbound cluster `outbound|<port>||<host>`, and only requests the
 * RBAC filter before it tagged (shadow rules, policy names `mesh-ext-authz-...`) are checked.
 */
import { outboundClusterName } from '../../model/naming';
import { PushContext } from '../../model/push-context';
import type { ExtAuthzGrpcProvider, ExtAuthzHttpProvider, ExtensionProvider } from '../../mesh-config';
import { EXT_AUTHZ_NETWORK_TYPE, EXT_AUTHZ_HTTP_TYPE, RBAC_HTTP_FILTER, RBAC_NETWORK_FILTER } from '../../envoy/well-known';
import { EXT_AUTHZ_PREFIX, EXT_AUTHZ_SHADOW_STAT_PREFIX, TCP_STAT_PREFIX } from './names';
import { MetadataMatcher, StringMatcher } from './rbac-types';

/** A provider turned into filter configs, or why it cannot be used. */
export interface BuiltExtAuthz {
  /** `envoy.filters.http.ext_authz` typed_config. */
  http?: Record<string, unknown>;
  /** `envoy.filters.network.ext_authz` typed_config; gRPC providers only (an HTTP server cannot check a TCP connection). */
  tcp?: Record<string, unknown>;
  error?: string;
}

/** Observes failed service lookups (provider_lookup_cluster_failures). */
export interface ExtAuthzObserver {
  lookupFailed(provider: string): void;
}

/** The incumbent's check timeout when the provider sets none. */
const DEFAULT_TIMEOUT_MS = 600_000;

/**
 * Every ext_authz provider of the push's mesh config, built once per push (they depend on the
 * mesh config and the registry only). Providers of other kinds are left out.
 */
export function extAuthzProviders(push: PushContext, observer?: ExtAuthzObserver): ReadonlyMap<string, BuiltExtAuthz> {
  return push.memoize('authz/ext-authz-providers', () => {
    const out = new Map<string, BuiltExtAuthz>();
    for (const provider of push.mesh.extensionProviders) {
      const built = buildProvider(push, provider, observer);
      if (built) out.set(provider.name, built);
    }
    return out;
  });
}

function buildProvider(push: PushContext, provider: ExtensionProvider, observer?: ExtAuthzObserver): BuiltExtAuthz | undefined {
  if (provider.kind !== 'envoyExtAuthzHttp' && provider.kind !== 'envoyExtAuthzGrpc') return undefined;
  if (provider.problem) return { error: `found errors in provider ${provider.name}: ${provider.problem}` };
  const config = provider.kind === 'envoyExtAuthzHttp' ? provider.envoyExtAuthzHttp : provider.envoyExtAuthzGrpc;
  const target = lookupCluster(push, config.service, config.port);
  if ('error' in target) {
    observer?.lookupFailed(provider.name);
    return { error: `failed to parse extension provider "${provider.name}": ${target.error}` };
  }
  return provider.kind === 'envoyExtAuthzHttp' ? httpConfig(target.host, target.cluster, provider.envoyExtAuthzHttp) : grpcConfig(target.cluster, provider.envoyExtAuthzGrpc);
}

/**
 * The provider's `service` (`<namespace>/<host>`, or a host known in one namespace only) and
 * port → its host and outbound cluster, as the incumbent looks them up in the registry.
 */
export function lookupCluster(push: PushContext, service: string, port: number): { host: string; cluster: string } | { error: string } {
  const slash = service.indexOf('/');
  const [namespace, host] = slash >= 0 ? [service.slice(0, slash), service.slice(slash + 1)] : [undefined, service];
  const found = push.service(host);
  if (found && !found.hostname.startsWith('*') && (namespace === undefined || found.namespace === namespace)) {
    return { host: found.hostname, cluster: outboundClusterName(port, '', found.hostname) };
  }
  return { error: `could not find service ${service}:${port} in the mesh service registry` };
}

function httpConfig(host: string, cluster: string, p: ExtAuthzHttpProvider): BuiltExtAuthz {
  const service: Record<string, unknown> = {
    server_uri: { uri: `http://${host}`, cluster, timeout: duration(p.timeoutMs ?? DEFAULT_TIMEOUT_MS) },
  };
  if (p.pathPrefix) service.path_prefix = p.pathPrefix;
  const additional = Object.keys(p.includeAdditionalHeadersInCheck).sort();
  if (additional.length > 0) {
    service.authorization_request = { headers_to_add: additional.map((key) => ({ key, value: p.includeAdditionalHeadersInCheck[key] })) };
  }
  if (p.headersToUpstreamOnAllow.length || p.headersToDownstreamOnDeny.length || p.headersToDownstreamOnAllow.length) {
    const response: Record<string, unknown> = {};
    if (p.headersToUpstreamOnAllow.length) response.allowed_upstream_headers = headerList(p.headersToUpstreamOnAllow);
    if (p.headersToDownstreamOnDeny.length) response.allowed_client_headers = headerList(p.headersToDownstreamOnDeny);
    if (p.headersToDownstreamOnAllow.length) response.allowed_client_headers_on_success = headerList(p.headersToDownstreamOnAllow);
    service.authorization_response = response;
  }
  const http: Record<string, unknown> = {
    '@type': EXT_AUTHZ_HTTP_TYPE,
    http_service: service,
    transport_api_version: 'V3',
    filter_enabled_metadata: filterMatcher(RBAC_HTTP_FILTER),
    ...common(p),
  };
  if (p.includeRequestHeadersInCheck.length) http.allowed_headers = headerList(p.includeRequestHeadersInCheck);
  return { http };
}

function grpcConfig(cluster: string, p: ExtAuthzGrpcProvider): BuiltExtAuthz {
  // `|` is not valid in an HTTP/2 authority; the incumbent sends the cluster name with `_.` instead.
  const grpcService = {
    envoy_grpc: { cluster_name: cluster, authority: cluster.replaceAll('|', '_.') },
    timeout: duration(p.timeoutMs ?? DEFAULT_TIMEOUT_MS),
  };
  const http = {
    '@type': EXT_AUTHZ_HTTP_TYPE,
    grpc_service: grpcService,
    transport_api_version: 'V3',
    filter_enabled_metadata: filterMatcher(RBAC_HTTP_FILTER),
    ...common(p),
  };
  const tcp: Record<string, unknown> = {
    '@type': EXT_AUTHZ_NETWORK_TYPE,
    stat_prefix: TCP_STAT_PREFIX,
    grpc_service: grpcService,
    transport_api_version: 'V3',
    filter_enabled_metadata: filterMatcher(RBAC_NETWORK_FILTER),
  };
  if (p.failOpen) tcp.failure_mode_allow = true;
  return { http, tcp };
}

function common(p: ExtAuthzHttpProvider | ExtAuthzGrpcProvider): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  if (p.failOpen) out.failure_mode_allow = true;
  if (p.clearRouteCache) out.clear_route_cache = true;
  if (p.statusOnError !== undefined) out.status_on_error = { code: p.statusOnError };
  const body = p.includeRequestBodyInCheck;
  if (body) {
    const settings: Record<string, unknown> = {};
    if (body.maxRequestBytes) settings.max_request_bytes = body.maxRequestBytes;
    if (body.allowPartialMessage) settings.allow_partial_message = true;
    if (body.packAsBytes) settings.pack_as_bytes = true;
    out.with_request_body = settings;
  }
  return out;
}

/** The incumbent's header patterns: `x*` is a prefix, `*x` a suffix, anything else exact; all case-insensitive. */
function headerList(headers: readonly string[]): { patterns: StringMatcher[] } {
  return {
    patterns: headers.map((h): StringMatcher => {
      if (h.startsWith('*')) return { suffix: h.slice(1), ignore_case: true };
      if (h.endsWith('*')) return { prefix: h.slice(0, -1), ignore_case: true };
      return { exact: h, ignore_case: true };
    }),
  };
}

/** Enables the ext_authz filter only for requests the shadow RBAC filter before it matched to a CUSTOM rule. */
function filterMatcher(rbacFilter: string): MetadataMatcher {
  return {
    filter: rbacFilter,
    path: [{ key: `${EXT_AUTHZ_SHADOW_STAT_PREFIX}shadow_effective_policy_id` }],
    value: { string_match: { prefix: EXT_AUTHZ_PREFIX } },
  };
}

function duration(ms: number): { seconds: number; nanos?: number } {
  const seconds = Math.floor(ms / 1000);
  const nanos = Math.round((ms % 1000) * 1e6);
  return nanos ? { seconds, nanos } : { seconds };
}
