/** AuthorizationPolicy → Envoy RBAC filters of the sidecar's inbound chains. */
export { AuthzContributorOptions, AuthzHttpFilterContributor, AuthzNetworkFilterContributor, authzFiltersFor, AuthzOptionsToken } from './contributors';
export { AuthorizationPolicy, AuthzLog, buildAuthzFilters, BuildOptions, ChainKind, isDryRun } from './builder';
export { TrustDomainBundle, LOCAL_TRUST_DOMAIN } from './trust-domain';
export { JWT_AUTHN_FILTER } from './attributes';
export * from './names';
export { BuiltExtAuthz, ExtAuthzObserver, extAuthzProviders, lookupCluster } from './ext-authz';
