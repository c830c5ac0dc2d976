/**
 * The built-in proxy's Envoy filters for request authentication and authorization (DESIGN.md §7):
 * jwt_authn, HTTP RBAC and network RBAC, each registered by the type URL of its typed_config.
 */
import type { HttpFilterFactory, NetworkFilterFactory } from '../http/filter-api';
import { jwtAuthnFilterFactory } from './jwt/filter';
import { rbacHttpFilterFactory } from './rbac/http-filter';
import { rbacNetworkFilterFactory } from './rbac/network-filter';

export { jwtAuthnFilterFactory, JwtAuthnFilter, JwtAuthnReport, JWT_AUTHN_TYPE_URL, JWT_AUTHN_METADATA } from './jwt/filter';
export { rbacHttpFilterFactory, RbacHttpFilter, RbacReport, HTTP_RBAC_TYPE_URL, HTTP_RBAC_METADATA, RBAC_DENIED_BODY } from './rbac/http-filter';
export type { RbacEvaluation, RbacPolicyResult, RbacAction } from './rbac/engine';
export { rbacNetworkFilterFactory, RbacNetworkFilter, NETWORK_RBAC_TYPE_URL } from './rbac/network-filter';
export { FilterConfigError } from './shared/config';
export { Status as JwtVerificationStatus, type JwtStatus } from './jwt/status';

/** Every HTTP filter factory of this module, keyed by type URL. */
export const httpFilterFactories: ReadonlyMap<string, HttpFilterFactory> = new Map(
  [jwtAuthnFilterFactory, rbacHttpFilterFactory].map((f) => [f.typeUrl, f]),
);

/** Every network filter factory of this module, keyed by type URL. */
export const networkFilterFactories: ReadonlyMap<string, NetworkFilterFactory> = new Map([[rbacNetworkFilterFactory.typeUrl, rbacNetworkFilterFactory]]);
