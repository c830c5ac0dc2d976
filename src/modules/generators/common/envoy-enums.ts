/** Envoy enum values, extension names and config sources the builders write. */
export { CORS_FILTER, FAULT_FILTER } from '../../envoy/well-known';

export const HTTP_PROTOCOL_OPTIONS_KEY = 'envoy.extensions.upstreams.http.v3.HttpProtocolOptions';

/**
 * Enum values by name. `encodeMessage` verifies plain objects with protobufjs, whose verifier
 * takes enum numbers only (names pass only inside an Any, which it does not descend into), so
 * the builders write numbers through these names.
 */
export const EnvoyEnum = {
  ApiVersion: { V3: 2 },
  DiscoveryType: { STATIC: 0, STRICT_DNS: 1, LOGICAL_DNS: 2, EDS: 3, ORIGINAL_DST: 4 },
  LbPolicy: { ROUND_ROBIN: 0, LEAST_REQUEST: 1, RING_HASH: 2, RANDOM: 3, MAGLEV: 5, CLUSTER_PROVIDED: 6 },
  DnsLookupFamily: { V4_ONLY: 1 },
  HealthStatus: { HEALTHY: 1, UNHEALTHY: 2, DRAINING: 3 },
  Denominator: { HUNDRED: 0, TEN_THOUSAND: 1, MILLION: 2 },
  HeaderAppendAction: { APPEND_IF_EXISTS_OR_ADD: 0, OVERWRITE_IF_EXISTS_OR_ADD: 2 },
  TrafficDirection: { INBOUND: 1, OUTBOUND: 2 },
  RedirectResponseCode: { MOVED_PERMANENTLY: 0, FOUND: 1, SEE_OTHER: 2, TEMPORARY_REDIRECT: 3, PERMANENT_REDIRECT: 4 },
} as const;

export const ADS_CONFIG_SOURCE = { ads: {}, resource_api_version: EnvoyEnum.ApiVersion.V3 };
