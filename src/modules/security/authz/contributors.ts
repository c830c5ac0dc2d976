/**
 * The RBAC filters as contributions to the sidecar's inbound chains: HTTP filters for HTTP
 * connection managers, network filters for TCP chains. Outbound chains get none (policies
 * protect the workload they select, on its way in). The filters are built once per push for
 * each (namespace, labels, chain kind): they do not depend on the port, since port conditions
 * are matched by the proxy against the connection's destination port.
 */
import { AuthorizationPolicySpec } from '../../config/kinds/authorization-policy';
import { EnvoyFilter, FilterChainContext, HttpFilterContributor, NetworkFilterContributor } from '../../model/generator';
import { Proxy } from '../../model/proxy';
import { PushContext } from '../../model/push-context';
import { policiesFor } from '../selection';
import { AuthzLog, buildAuthzFilters, ChainKind, SILENT_LOG } from './builder';
import { ExtAuthzObserver, extAuthzProviders } from './ext-authz';
import { LOCAL_TRUST_DOMAIN, TrustDomainBundle } from './trust-domain';

/** The options the rbac plugin's parts are built with (the mesh config's trust domains); bound by the security module. */
export const AuthzOptionsToken = Symbol.for('mesh.AuthzOptions');
export interface AuthzContributorOptions {
  /** The mesh's trust domain; `cluster.local` when not given. */
  trustDomain?: string;
  /** Former or alternative trust domains whose identities count as the trust domain's. */
  trustDomainAliases?: readonly string[];
  /** Skipped rules and CUSTOM fallbacks; the daemon passes its `authorization` logging scope. */
  log?: AuthzLog;
  /** Counts external authorizers whose service is not in the registry (provider_lookup_cluster_failures). */
  extAuthzObserver?: ExtAuthzObserver;
}

/**
 * The authorization filters (RBAC, and ext_authz for CUSTOM policies with the push's mesh
 * config providers) for `proxy`'s inbound chains of one kind, shared by every chain of the
 * push that needs them.
 */
export function authzFiltersFor(
  push: PushContext,
  proxy: Pick<Proxy, 'namespace' | 'labels'>,
  chain: ChainKind,
  trustDomains: TrustDomainBundle,
  log: AuthzLog = SILENT_LOG,
  observer?: ExtAuthzObserver,
): readonly EnvoyFilter[] {
  const labels = JSON.stringify(Object.keys(proxy.labels).sort().map((k) => [k, proxy.labels[k]]));
  return push.memoize(`authz/${chain}/${trustDomains.key}/${proxy.namespace}/${labels}`, () => {
    const policies = policiesFor<AuthorizationPolicySpec>(push, proxy, 'AuthorizationPolicy');
    const extAuthz = policies.some((p) => p.spec.action === 'CUSTOM') ? extAuthzProviders(push, observer) : undefined;
    return deepFreeze(buildAuthzFilters(policies, { trustDomains, chain, log, extAuthz }));
  });
}

abstract class AuthzContributor {
  protected readonly log: AuthzLog;
  private bundle: TrustDomainBundle;

  constructor(private readonly options: AuthzContributorOptions = {}) {
    this.bundle = this.trustDomains; // an empty trust domain fails here, at start
    this.log = options.log ?? SILENT_LOG;
  }

  /** The trust domains as the options say now (the daemon's follow the live mesh config). */
  protected get trustDomains(): TrustDomainBundle {
    const trustDomain = this.options.trustDomain ?? LOCAL_TRUST_DOMAIN;
    const aliases = this.options.trustDomainAliases ?? [];
    const key = [trustDomain, ...aliases.filter((a) => a !== trustDomain)].join(',');
    if (this.bundle?.key !== key) this.bundle = new TrustDomainBundle(trustDomain, aliases);
    return this.bundle;
  }

  protected filters(context: FilterChainContext, chain: ChainKind): EnvoyFilter[] {
    if (context.direction !== 'inbound') return [];
    return [...authzFiltersFor(context.push, context.proxy, chain, this.trustDomains, this.log, this.options.extAuthzObserver)];
  }
}

/** `envoy.filters.http.rbac` filters for inbound HTTP connection managers; place them after `jwt_authn`, whose claims they match. */
export class AuthzHttpFilterContributor extends AuthzContributor implements HttpFilterContributor {
  httpFilters(context: FilterChainContext): EnvoyFilter[] {
    return this.filters(context, 'http');
  }
}

/** `envoy.filters.network.rbac` filters before `tcp_proxy` on inbound TCP chains. */
export class AuthzNetworkFilterContributor extends AuthzContributor implements NetworkFilterContributor {
  networkFilters(context: FilterChainContext): { before?: EnvoyFilter[] } {
    const before = this.filters(context, 'tcp');
    return before.length > 0 ? { before } : {};
  }
}

/** Shared across proxies and chains, so nothing may change them after the build. */
function deepFreeze<T>(value: T): T {
  if (value && typeof value === 'object' && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const v of Object.values(value)) deepFreeze(v);
  }
  return value;
}
