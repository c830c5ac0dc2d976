/** Request authentication: RequestAuthentication → jwt_authn, and the daemon's key-set resolver. */
export { RequestAuthenticationFilters, RequestAuthenticationFiltersOptions } from './contributor';
export { DaemonKeySets, DaemonKeySetsOptions, DaemonKeySetsOptionsToken, KeySetPushes, KeySetSettings, keySetSettingsFrom } from './daemon-key-sets';
export { FAIL_CLOSED_KEY_ID, failClosedJwks } from './fail-closed-jwks';
export { JWKS_FETCH_MODE_VALUES, JwksFetchMode, AuthnSettingError, parseJwksFetchMode } from './fetch-mode';
export { HttpGetError, HttpGetOptions, httpGetText } from './http-get';
export {
  JwksResolver, JwksResolverLogger, JwksResolverObserver, JwksResolverOptions, KeySetProvider, normalizedKeySet,
} from './jwks-resolver';
export {
  DEFAULT_TOKEN_HEADER, DEFAULT_TOKEN_PARAM, JWT_AUTHN_FILTER, JWT_AUTHN_TYPE, JWT_PAYLOAD_METADATA_KEY, jwtAuthnFilter, providerName, ResolvedRule,
  SPACE_DELIMITED_CLAIMS,
} from './jwt-filter';
export {
  daemonFetchedKeySets, DEFAULT_JWKS_TIMEOUT, JwksSource, jwksSourceOf, jwksUriTarget, KeySetLocation, keySetId, MeshLookup, meshLookup,
  policiesUsingKeySets, ruleTimeout,
} from './key-source';
