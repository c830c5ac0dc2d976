/** The Envoy filters the built-in proxy enforces, by type URL. */
import { jwtAuthnFilterFactory, rbacHttpFilterFactory, rbacNetworkFilterFactory } from './filters';
import { HttpFilterFactory, NetworkFilterFactory } from './http/filter-api';

export const BUILTIN_HTTP_FILTERS: readonly HttpFilterFactory[] = [jwtAuthnFilterFactory, rbacHttpFilterFactory];
export const BUILTIN_NETWORK_FILTERS: readonly NetworkFilterFactory[] = [rbacNetworkFilterFactory];
