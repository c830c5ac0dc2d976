/** The Envoy filters the built-in proxy enforces, by type URL. */
import { HttpFilterFactory, NetworkFilterFactory } from './http/filter-api';

export const BUILTIN_HTTP_FILTERS: readonly HttpFilterFactory[] = [];
export const BUILTIN_NETWORK_FILTERS: readonly NetworkFilterFactory[] = [];
