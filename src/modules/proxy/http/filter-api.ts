/**
 * How the built-in proxy (DESIGN.md §7) runs the Envoy filters the daemon generates. Each
 * filter is created from its `typed_config` as `decodeMessage` returns it (snake_case fields,
 * `@type` on Any, enums as names, int64 as strings, Duration as `{ seconds, nanos }`,
 * Struct as `{ fields }`, see xds/struct.ts) and then sees every request or connection.
 */

import type { ClusterHttpClient } from '../upstream/cluster-http-client';
import type { ProxyLoggers } from '../logging/proxy-loggers';

/** The downstream connection a request or TCP stream arrived on. */
export interface ConnectionInfo {
  /** The direct peer (Envoy's `source.address`). */
  remoteAddress: string;
  remotePort: number;
  /** Where the connection arrived (Envoy's `destination.address`): the listener's address. */
  localAddress: string;
  localPort: number;
  /** URI SAN of the peer's verified client certificate (mTLS), e.g. `spiffe://cluster.local/ns/foo/sa/bar`. */
  peerPrincipal?: string;
  /** `tls` when the connection began with a TLS handshake, else `raw_buffer` (set when a chain asks). */
  transportProtocol?: 'tls' | 'raw_buffer';
  /** TLS server name the client asked for. */
  sni?: string;
}

/** An inbound request as HTTP filters see it. Filters may change `headers` and `metadata`. */
export interface ProxyHttpRequest {
  /** Upper-case method (`:method`). */
  method: string;
  /** Path with query string (`:path`), as the connection manager normalized it (path-normalization.ts). */
  path: string;
  /**
   * Lower-case header names to values; repeated headers are joined with `,` as Envoy matches
   * them. The pseudo headers `:method`, `:path`, `:authority` and `:scheme` are present too.
   */
  headers: Record<string, string>;
  connection: ConnectionInfo;
  /**
   * Dynamic metadata per filter name (Envoy's `filter_metadata`), e.g. jwt_authn writes the
   * verified token's claims under `envoy.filters.http.jwt_authn` → `payload` (its
   * `payload_in_metadata` key), which RBAC's metadata matchers then read. Plain JSON values.
   */
  metadata: Record<string, Record<string, unknown>>;
  /**
   * Set only when the request is evaluated to be explained (`meshctl x authz simulate`): the
   * filters that decide access add what they decided and why. Absent when serving traffic.
   */
  trace?: FilterReport[];
}

/** One filter's account of its decision on a traced request; `type` tells the shape (rbac.ts, jwt filter.ts). */
export interface FilterReport {
  readonly filter: string;
  readonly type: string;
}

export type FilterOutcome =
  | { kind: 'continue' }
  /** Answer locally and stop: the request goes no further. */
  | { kind: 'respond'; status: number; body: string; headers?: Record<string, string | string[]> };

export const CONTINUE: FilterOutcome = Object.freeze({ kind: 'continue' });

/**
 * The `onRequest` of a filter with nothing to do on requests (it acts on responses only, or
 * its config has no effect in this proxy): the connection manager leaves such filters out of
 * the request path, so they cost nothing per request.
 */
export function passRequest(): FilterOutcome {
  return CONTINUE;
}

/** An upstream response as HTTP filters see it, before its headers are sent downstream. */
export interface ProxyHttpResponse {
  status: number;
  /** Lower-case header names to values; filters may add, change or delete them. */
  headers: Record<string, string | string[]>;
}

/** One HTTP filter instance of a listener's filter chain (created per config, reused for every request). */
export interface HttpFilter {
  /** Envoy filter name, e.g. `envoy.filters.http.jwt_authn`. */
  readonly name: string;
  onRequest(request: ProxyHttpRequest): FilterOutcome | Promise<FilterOutcome>;
  /**
   * Sees the response the router got from upstream, in reverse chain order (Envoy's encoder
   * order), before its headers go downstream. The proxy's own local replies (401, 403, 503...)
   * do not pass here. Synchronous: it must not delay the response.
   */
  onResponse?(response: ProxyHttpResponse, request: ProxyHttpRequest): void;
  /** Releases timers and caches when the listener is replaced or the proxy stops. */
  close?(): void;
}

/** One network filter instance; sees each new connection before the terminal filter (tcp_proxy / HCM). */
export interface NetworkFilter {
  readonly name: string;
  /**
   * `close`: the connection is closed at once, as Envoy's network RBAC does on deny. With
   * `trace` (an explained evaluation), filters that decide access add their report to it.
   */
  onConnection(connection: ConnectionInfo, trace?: FilterReport[]): 'continue' | 'close';
  close?(): void;
}

/** What filters may use from the proxy. */
export interface FilterContext {
  /** Clock in milliseconds since the epoch (tests move it to check `exp`/`nbf`). */
  now(): number;
  log(level: 'debug' | 'info' | 'warn' | 'error', message: string): void;
  /** Whether `log('debug', ...)` is written, so costly detail is only worked out then; absent = not written. */
  debugEnabled?(): boolean;
  /**
   * The proxy's named loggers (Envoy's), for its own parts; the registry gives each filter a
   * context whose `log` is its logger (jwt, rbac...). Absent in bare contexts (tests).
   */
  loggers?: ProxyLoggers;
  /** HTTP requests to the proxy's clusters (ext_authz's check); absent where the proxy has none to offer. */
  clusters?: ClusterHttpClient;
}

/**
 * Builds a filter from its typed_config, once per listener config; contributed to the proxy
 * (ProxyHttpFilterFactory) and looked up by type URL. Throws on config it cannot honour (the proxy NACKs).
 */
export interface HttpFilterFactory {
  readonly typeUrl: string;
  create(name: string, config: Record<string, unknown>, context: FilterContext): HttpFilter;
}

export interface NetworkFilterFactory {
  readonly typeUrl: string;
  create(name: string, config: Record<string, unknown>, context: FilterContext): NetworkFilter;
}
