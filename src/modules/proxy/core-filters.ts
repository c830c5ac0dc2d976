/**
 * The Envoy HTTP filters the daemon puts in every chain that the built-in proxy accepts as
 * part of its core. CORS and fault act only through per-route config (`typed_per_filter_config`
 * policies, fault injection), which this proxy does not apply; their filter-level config has no
 * effect of its own, so they are accepted and do nothing per request, as before.
 */
import { CORS_TYPE, FAULT_TYPE } from '../envoy/well-known';
import { acceptOnlyHttpFilter } from './filters/accept-only';
import type { HttpFilterFactory } from './http/filter-api';

export const CORE_HTTP_FILTERS: readonly HttpFilterFactory[] = [acceptOnlyHttpFilter(CORS_TYPE), acceptOnlyHttpFilter(FAULT_TYPE)];
