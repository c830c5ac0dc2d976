/** Per-route policies: timeouts, retries, hash policies, fault injection and CORS. */
import { CorsPolicy, HTTPFaultInjection, HTTPRetry, Percent } from '../../config/kinds/virtual-service';
import { Proxy } from '../../model/proxy';
import { PushContext } from '../../model/push-context';
import { Duration } from '../../settings/duration';
import { typeUrlOf } from '../../envoy/type-urls';
import { protoDuration } from './durations';
import { EnvoyEnum } from './envoy-enums';
import { stringMatcher } from './route-match';
import { effectivePolicy, subsetOf } from './traffic-policy';

type Obj = Record<string, unknown>;

/** The incumbent's retry policy of a route whose VirtualService says nothing about retries. */
export const DEFAULT_RETRY_ON = 'connect-failure,refused-stream,unavailable,cancelled,retriable-status-codes';
/** retryOn conditions gRPC clients understand (status code names). */
export const GRPC_RETRY_ON = new Set(['cancelled', 'deadline-exceeded', 'internal', 'resource-exhausted', 'unavailable']);

const GRPC_CODES: Record<string, number> = {
  OK: 0, CANCELLED: 1, UNKNOWN: 2, INVALID_ARGUMENT: 3, DEADLINE_EXCEEDED: 4, NOT_FOUND: 5, ALREADY_EXISTS: 6, PERMISSION_DENIED: 7,
  RESOURCE_EXHAUSTED: 8, FAILED_PRECONDITION: 9, ABORTED: 10, OUT_OF_RANGE: 11, UNIMPLEMENTED: 12, INTERNAL: 13, UNAVAILABLE: 14,
  DATA_LOSS: 15, UNAUTHENTICATED: 16,
};

/** A percentage (0–100, fractional) as a FractionalPercent per million; unset = 100%. */
export function fractionalPercent(p: Percent | undefined): { numerator: number; denominator: number } {
  const value = p?.value ?? 100;
  return { numerator: Math.round(value * 10_000), denominator: EnvoyEnum.Denominator.MILLION };
}

export function applyTimeout(action: Obj, timeout: string | undefined, forGrpc: boolean): void {
  if (forGrpc) {
    if (timeout !== undefined) action.max_stream_duration = { max_stream_duration: protoDuration(timeout) };
    return;
  }
  // Unset means no timeout (0s), not Envoy's 15s default.
  action.timeout = timeout !== undefined ? protoDuration(timeout) : { seconds: 0 };
}

/**
 * The incumbent's retry policy: without `retries`, 2 retries on connect failures, refused
 * streams, `unavailable`, `cancelled` and 503; `attempts: 0` (or unset) turns retries off;
 * bare status codes in retryOn become retriable_status_codes.
 */
export function retryPolicy(retries: HTTPRetry | undefined, forGrpc: boolean, consistentHash: boolean): Obj | undefined {
  if (retries && (retries.attempts ?? 0) <= 0) return undefined;
  let retryOn = DEFAULT_RETRY_ON;
  let codes: number[] = [503];
  if (retries?.retryOn) {
    const parts = retries.retryOn.split(',').map((s) => s.trim()).filter((s) => s);
    codes = parts.filter((s) => /^\d+$/.test(s)).map(Number);
    const conditions = parts.filter((s) => !/^\d+$/.test(s));
    if (codes.length > 0 && !conditions.includes('retriable-status-codes')) conditions.push('retriable-status-codes');
    retryOn = conditions.join(',');
  }
  const numRetries = retries?.attempts ?? 2;
  if (forGrpc) {
    const grpcOn = retryOn.split(',').filter((s) => GRPC_RETRY_ON.has(s));
    if (grpcOn.length === 0) return undefined;
    const out: Obj = { retry_on: grpcOn.join(','), num_retries: { value: numRetries } };
    if (retries?.perTryTimeout) out.per_try_timeout = protoDuration(retries.perTryTimeout);
    return out;
  }
  const out: Obj = { retry_on: retryOn, num_retries: { value: numRetries } };
  if (retries?.perTryTimeout) out.per_try_timeout = protoDuration(retries.perTryTimeout);
  if (codes.length) out.retriable_status_codes = codes;
  // Retry on another host, unless consistent hashing pins requests to one.
  if (!consistentHash) {
    out.retry_host_predicate = [
      { name: 'envoy.retry_host_predicates.previous_hosts', typed_config: { '@type': typeUrlOf('envoy.extensions.retry.host.previous_hosts.v3.PreviousHostsPredicate') } },
    ];
  }
  out.host_selection_retry_max_attempts = 5;
  return out;
}

/** Route hash policies from the consistentHash of the DestinationRule of a destination. */
export function hashPolicies(push: PushContext, proxy: Proxy, host: string, subsetName: string, port: number): Obj[] {
  const { dr, subset } = subsetOf(push, proxy, host, subsetName);
  if (!dr) return [];
  const ch = effectivePolicy(dr.spec, subset, port).loadBalancer?.consistentHash;
  if (!ch) return [];
  if (ch.httpHeaderName) return [{ header: { header_name: ch.httpHeaderName } }];
  if (ch.httpCookie) {
    const cookie: Obj = { name: ch.httpCookie.name };
    if (ch.httpCookie.path) cookie.path = ch.httpCookie.path;
    if (ch.httpCookie.ttl) cookie.ttl = protoDuration(ch.httpCookie.ttl);
    return [{ cookie }];
  }
  if (ch.useSourceIp) return [{ connection_properties: { source_ip: true } }];
  if (ch.httpQueryParameterName) return [{ query_parameter: { name: ch.httpQueryParameterName } }];
  return [];
}

/** VirtualService fault injection as the fault filter's per-route HTTPFault. */
export function faultConfig(fault: HTTPFaultInjection | undefined): Obj | undefined {
  if (!fault) return undefined;
  const out: Obj = { '@type': typeUrlOf('envoy.extensions.filters.http.fault.v3.HTTPFault') };
  if (fault.delay?.fixedDelay) out.delay = { fixed_delay: protoDuration(fault.delay.fixedDelay), percentage: fractionalPercent(fault.delay.percentage) };
  const a = fault.abort;
  if (a) {
    if (a.httpStatus !== undefined) out.abort = { http_status: a.httpStatus, percentage: fractionalPercent(a.percentage) };
    else if (a.grpcStatus !== undefined) {
      const code = /^\d+$/.test(a.grpcStatus) ? Number(a.grpcStatus) : GRPC_CODES[a.grpcStatus.toUpperCase()];
      if (code !== undefined) out.abort = { grpc_status: code, percentage: fractionalPercent(a.percentage) };
    }
  }
  return out.delay || out.abort ? out : undefined;
}

/** A VirtualService CORS policy as the CORS filter's per-route CorsPolicy. */
export function corsConfig(cors: CorsPolicy): Obj {
  const out: Obj = { '@type': typeUrlOf('envoy.extensions.filters.http.cors.v3.CorsPolicy') };
  const origins = (cors.allowOrigins ?? []).map(stringMatcher).filter((m): m is Obj => m !== undefined);
  if (origins.length) out.allow_origin_string_match = origins;
  if (cors.allowMethods?.length) out.allow_methods = cors.allowMethods.join(',');
  if (cors.allowHeaders?.length) out.allow_headers = cors.allowHeaders.join(',');
  if (cors.exposeHeaders?.length) out.expose_headers = cors.exposeHeaders.join(',');
  if (cors.maxAge) out.max_age = String(Math.floor(Duration.parse(cors.maxAge).seconds));
  if (cors.allowCredentials !== undefined) out.allow_credentials = { value: cors.allowCredentials };
  if (cors.unmatchedPreflights) out.forward_not_matching_preflights = { value: cors.unmatchedPreflights !== 'IGNORE' };
  return out;
}
