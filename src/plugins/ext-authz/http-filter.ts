/**
 * Envoy's `envoy.filters.http.ext_authz` with an HTTP authorization server, in the built-in
 * proxy: for each request the filter is enabled for (`filter_enabled_metadata`, here the tag
 * the CUSTOM policies' shadow RBAC filter wrote), a check request goes to the server's
 * cluster — the client's method, `path_prefix` + its path, the allowed headers plus Host,
 * Authorization and headers_to_add, no body — and then:
 * - 200: the request goes on, with the server's headers that `allowed_upstream_headers`
 *   names set on it; those `allowed_client_headers_on_success` names go to the client's response;
 * - any other status below 500: denied with the server's status and body, and its headers
 *   (those `allowed_client_headers` names, or all but Host when it names none);
 * - 5xx, no answer within the timeout, or no reachable server: an error, which lets the
 *   request on with `failure_mode_allow` and otherwise answers `status_on_error` (403).
 */
import { envoyProtos } from '../../modules/envoy/protos';
import { compileMetadataMatcher, MetadataPredicate } from '../../modules/proxy/filters/matchers/metadata-matcher';
import { compileStringMatcher, StringPredicate } from '../../modules/proxy/filters/matchers/string-matcher';
import { asBool, asList, asObject, asString, durationMs, fail, has, isObject, optionalObject, requiredString } from '../../modules/proxy/filters/shared/config';
import { CONTINUE, FilterContext, FilterOutcome, HttpFilter, ProxyHttpRequest, ProxyHttpResponse } from '../../modules/proxy/http/filter-api';
import type { ClusterHttpClient, ClusterResponse } from '../../modules/proxy/upstream/cluster-http-client';

/** Request headers an HTTP authorization server always gets (besides the allowed ones). */
const ALWAYS_SENT = new Set(['host', 'authorization']);
/** Server response headers that belong to its own message, never copied to the client's. */
const OWN_HEADERS = new Set(['host', 'content-length', 'transfer-encoding', 'connection', 'keep-alive', 'date']);
/** Added to `allowed_client_headers` whenever it is set, as Envoy does. */
const ALWAYS_TO_CLIENT = ['path', 'status', 'content-length', 'www-authenticate', 'location'];

interface HttpServiceConfig {
  cluster: string;
  timeoutMs: number;
  pathPrefix: string;
  headersToAdd: { key: string; value: string }[];
  toUpstream?: StringPredicate;
  toUpstreamAppend?: StringPredicate;
  toClientOnDeny?: StringPredicate;
  toClientOnSuccess?: StringPredicate;
}

export interface ExtAuthzConfig {
  enabled?: MetadataPredicate;
  allowedHeaders?: StringPredicate;
  disallowedHeaders?: StringPredicate;
  failureModeAllow: boolean;
  failureModeAllowHeaderAdd: boolean;
  statusOnError: number;
  http: HttpServiceConfig;
  /** with_request_body is set: this proxy cannot buffer the body for the check, it says so once. */
  wantsBody: boolean;
}

/** A ListStringMatcher (`{ patterns }`) as one predicate; undefined when absent. */
function listMatcher(value: unknown, field: string): StringPredicate | undefined {
  const list = optionalObject(value, field);
  if (!list) return undefined;
  const patterns = asList(list.patterns, `${field}.patterns`).map((p, i) => compileStringMatcher(p, `${field}.patterns[${i}]`));
  return (s) => patterns.some((p) => p(s));
}

let statusCodes: Record<string, number> | undefined;

/** envoy.type.v3.HttpStatus: the code as the decoder renders it (the enum's name), or a number. */
function statusOf(value: unknown, field: string): number {
  const status = asObject(value, field);
  const code = status.code;
  if (typeof code === 'number') return code;
  statusCodes ??= envoyProtos().lookupEnum('envoy.type.v3.StatusCode').values;
  const n = typeof code === 'string' ? statusCodes[code] : undefined;
  if (n === undefined || n === 0) fail(`${field}.code`, `unknown HTTP status ${JSON.stringify(code)}`);
  return n;
}

export function parseExtAuthzConfig(value: unknown, field: string): ExtAuthzConfig {
  const config = asObject(value, field);
  if (has(config, 'grpc_service')) fail(`${field}.grpc_service`, 'a gRPC authorization server is not supported by the built-in proxy (use an HTTP provider, envoyExtAuthzHttp)');
  const service = asObject(config.http_service, `${field}.http_service`);
  const uri = asObject(service.server_uri, `${field}.http_service.server_uri`);
  const request = optionalObject(service.authorization_request, `${field}.http_service.authorization_request`);
  const response = optionalObject(service.authorization_response, `${field}.http_service.authorization_response`);
  const rf = `${field}.http_service.authorization_response`;
  return {
    enabled: has(config, 'filter_enabled_metadata') ? compileMetadataMatcher(config.filter_enabled_metadata, `${field}.filter_enabled_metadata`) : undefined,
    // The deprecated authorization_request.allowed_headers is read when the new field is not set.
    allowedHeaders: listMatcher(config.allowed_headers, `${field}.allowed_headers`) ?? listMatcher(request?.allowed_headers, `${field}.http_service.authorization_request.allowed_headers`),
    disallowedHeaders: listMatcher(config.disallowed_headers, `${field}.disallowed_headers`),
    failureModeAllow: asBool(config.failure_mode_allow, `${field}.failure_mode_allow`),
    failureModeAllowHeaderAdd: asBool(config.failure_mode_allow_header_add, `${field}.failure_mode_allow_header_add`),
    statusOnError: has(config, 'status_on_error') ? statusOf(config.status_on_error, `${field}.status_on_error`) : 403,
    http: {
      cluster: requiredString(uri.cluster, `${field}.http_service.server_uri.cluster`),
      timeoutMs: durationMs(uri.timeout, `${field}.http_service.server_uri.timeout`) ?? 200,
      pathPrefix: asString(service.path_prefix, `${field}.http_service.path_prefix`),
      headersToAdd: asList(request?.headers_to_add, `${field}.http_service.authorization_request.headers_to_add`).map((h, i) => {
        const at = `${field}.http_service.authorization_request.headers_to_add[${i}]`;
        const header = asObject(h, at);
        return { key: requiredString(header.key, `${at}.key`).toLowerCase(), value: asString(header.value, `${at}.value`) };
      }),
      toUpstream: listMatcher(response?.allowed_upstream_headers, `${rf}.allowed_upstream_headers`),
      toUpstreamAppend: listMatcher(response?.allowed_upstream_headers_to_append, `${rf}.allowed_upstream_headers_to_append`),
      toClientOnDeny: listMatcher(response?.allowed_client_headers, `${rf}.allowed_client_headers`),
      toClientOnSuccess: listMatcher(response?.allowed_client_headers_on_success, `${rf}.allowed_client_headers_on_success`),
    },
    wantsBody: isObject(config.with_request_body),
  };
}

type Check = { kind: 'allowed'; response: ClusterResponse } | { kind: 'denied'; response: ClusterResponse } | { kind: 'error'; reason: string };

export class ExtAuthzHttpFilter implements HttpFilter {
  /** Headers for the client's response, by the request they were allowed for. */
  private readonly onSuccess = new WeakMap<ProxyHttpRequest, Record<string, string | string[]>>();
  private readonly clusters: ClusterHttpClient;

  constructor(
    readonly name: string,
    private readonly config: ExtAuthzConfig,
    private readonly context: FilterContext,
  ) {
    if (!context.clusters) throw new Error(`${name}: this proxy cannot reach clusters from a filter`);
    this.clusters = context.clusters;
    if (config.wantsBody) context.log('warn', `${name}: with_request_body is set, but the built-in proxy sends checks without the request body`);
  }

  async onRequest(request: ProxyHttpRequest): Promise<FilterOutcome> {
    if (this.config.enabled && !this.config.enabled(request.metadata)) return CONTINUE;
    const check = await this.check(request);
    switch (check.kind) {
      case 'allowed':
        this.allow(request, check.response);
        return CONTINUE;
      case 'denied':
        this.context.log('debug', `${this.name}: denied ${request.method} ${request.path} with ${check.response.status}`);
        return { kind: 'respond', status: check.response.status, body: check.response.body.toString('utf8'), headers: this.clientHeadersOnDeny(check.response) };
      case 'error':
        if (this.config.failureModeAllow) {
          this.context.log('warn', `${this.name}: ${check.reason}; allowed (failure_mode_allow)`);
          if (this.config.failureModeAllowHeaderAdd) request.headers['x-envoy-auth-failure-mode-allowed'] = 'true';
          return CONTINUE;
        }
        this.context.log('warn', `${this.name}: ${check.reason}; answered ${this.config.statusOnError}`);
        return { kind: 'respond', status: this.config.statusOnError, body: '' };
    }
  }

  onResponse(response: ProxyHttpResponse, request: ProxyHttpRequest): void {
    const headers = this.onSuccess.get(request);
    if (headers) Object.assign(response.headers, headers);
  }

  private async check(request: ProxyHttpRequest): Promise<Check> {
    const { http } = this.config;
    const headers: Record<string, string> = {};
    for (const [name, value] of Object.entries(request.headers)) {
      if (name.startsWith(':')) continue;
      const allowed = ALWAYS_SENT.has(name) || this.config.allowedHeaders?.(name);
      if (allowed && !this.config.disallowedHeaders?.(name)) headers[name] = value;
    }
    headers.host = request.headers[':authority'] ?? headers.host ?? '';
    for (const { key, value } of http.headersToAdd) headers[key] = value;
    let response: ClusterResponse;
    try {
      response = await this.clusters.request(http.cluster, { method: request.method, path: http.pathPrefix + request.path, headers, timeoutMs: http.timeoutMs });
    } catch (err) {
      return { kind: 'error', reason: `authorization server unavailable: ${(err as Error).message}` };
    }
    if (response.status === 200) return { kind: 'allowed', response };
    if (response.status >= 500) return { kind: 'error', reason: `authorization server answered ${response.status}` };
    return { kind: 'denied', response };
  }

  private allow(request: ProxyHttpRequest, response: ClusterResponse): void {
    const { http } = this.config;
    const success: Record<string, string | string[]> = {};
    for (const [name, value] of Object.entries(response.headers)) {
      if (OWN_HEADERS.has(name)) continue;
      const text = Array.isArray(value) ? value.join(',') : value;
      if (http.toUpstream?.(name)) request.headers[name] = text;
      else if (http.toUpstreamAppend?.(name)) request.headers[name] = request.headers[name] ? `${request.headers[name]},${text}` : text;
      if (http.toClientOnSuccess?.(name)) success[name] = value;
    }
    if (Object.keys(success).length > 0) this.onSuccess.set(request, success);
  }

  private clientHeadersOnDeny(response: ClusterResponse): Record<string, string | string[]> {
    const wanted = this.config.http.toClientOnDeny;
    const out: Record<string, string | string[]> = {};
    for (const [name, value] of Object.entries(response.headers)) {
      if (OWN_HEADERS.has(name)) continue;
      if (!wanted || wanted(name) || ALWAYS_TO_CLIENT.includes(name)) out[name] = value;
    }
    return out;
  }
}
