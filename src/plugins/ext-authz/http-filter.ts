/**
 * Envoy's `envoy.filters.http.ext_authz` in the built-in proxy. For each request the filter is
 * enabled for (`filter_enabled_metadata`, here the tag the CUSTOM policies' shadow RBAC filter
 * wrote), the authorization server of the configured cluster is asked, without the body:
 *
 * With an HTTP server (`http_service`), a request with the client's method, `path_prefix` +
 * its path, the allowed headers plus Host, Authorization and headers_to_add; then
 * - 200: the request goes on, with the server's headers that `allowed_upstream_headers`
 *   names set on it; those `allowed_client_headers_on_success` names go to the client's response;
 * - any other status below 500: denied with the server's status and body, and its headers
 *   (those `allowed_client_headers` names, or all but Host when it names none);
 * - 5xx: an error.
 * With a gRPC server (`grpc_service`), `Authorization/Check` with the request's attributes
 * (every header unless `allowed_headers` says which); status OK allows with the OkHttpResponse's
 * header changes, any other status denies with the DeniedHttpResponse (403 by default).
 *
 * No answer within the timeout, or no reachable server, is an error, which lets the request
 * on with `failure_mode_allow` and otherwise answers `status_on_error` (403).
 */
import { envoyProtos } from '../../modules/envoy/protos';
import { compileMetadataMatcher, MetadataPredicate } from '../../modules/proxy/filters/matchers/metadata-matcher';
import { compileStringMatcher, StringPredicate } from '../../modules/proxy/filters/matchers/string-matcher';
import { asBool, asList, asObject, asString, durationMs, fail, has, isObject, optionalObject, requiredString } from '../../modules/proxy/filters/shared/config';
import { CONTINUE, FilterContext, FilterOutcome, HttpFilter, ProxyHttpRequest, ProxyHttpResponse } from '../../modules/proxy/http/filter-api';
import type { ClusterHttpClient, ClusterResponse } from '../../modules/proxy/upstream/cluster-http-client';
import { AuthorizationClients, loadAuthorizationProtos } from './grpc-check';

/** Request headers an HTTP authorization server always gets (besides the allowed ones). */
const ALWAYS_SENT = new Set(['host', 'authorization']);
/** Server response headers that belong to its own message, never copied to the client's. */
const OWN_HEADERS = new Set(['host', 'content-length', 'transfer-encoding', 'connection', 'keep-alive', 'date']);
/** Added to `allowed_client_headers` whenever it is set, as Envoy does. */
const ALWAYS_TO_CLIENT = ['path', 'status', 'content-length', 'www-authenticate', 'location'];

interface HttpServiceConfig {
  kind: 'http';
  cluster: string;
  timeoutMs: number;
  pathPrefix: string;
  headersToAdd: { key: string; value: string }[];
  toUpstream?: StringPredicate;
  toUpstreamAppend?: StringPredicate;
  toClientOnDeny?: StringPredicate;
  toClientOnSuccess?: StringPredicate;
}

interface GrpcServiceConfig {
  kind: 'grpc';
  cluster: string;
  /** The :authority of the calls (the cluster name is not a valid one). */
  authority: string;
  timeoutMs: number;
}

export interface ExtAuthzConfig {
  enabled?: MetadataPredicate;
  allowedHeaders?: StringPredicate;
  disallowedHeaders?: StringPredicate;
  failureModeAllow: boolean;
  failureModeAllowHeaderAdd: boolean;
  statusOnError: number;
  service: HttpServiceConfig | GrpcServiceConfig;
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
  const grpc = has(config, 'grpc_service');
  if (grpc === has(config, 'http_service')) fail(field, 'needs exactly one of http_service and grpc_service');
  const request = grpc ? undefined : optionalObject(asObject(config.http_service, `${field}.http_service`).authorization_request, `${field}.http_service.authorization_request`);
  return {
    enabled: has(config, 'filter_enabled_metadata') ? compileMetadataMatcher(config.filter_enabled_metadata, `${field}.filter_enabled_metadata`) : undefined,
    // The deprecated authorization_request.allowed_headers is read when the new field is not set.
    allowedHeaders: listMatcher(config.allowed_headers, `${field}.allowed_headers`) ?? listMatcher(request?.allowed_headers, `${field}.http_service.authorization_request.allowed_headers`),
    disallowedHeaders: listMatcher(config.disallowed_headers, `${field}.disallowed_headers`),
    failureModeAllow: asBool(config.failure_mode_allow, `${field}.failure_mode_allow`),
    failureModeAllowHeaderAdd: asBool(config.failure_mode_allow_header_add, `${field}.failure_mode_allow_header_add`),
    statusOnError: has(config, 'status_on_error') ? statusOf(config.status_on_error, `${field}.status_on_error`) : 403,
    service: grpc ? grpcServiceOf(config.grpc_service, `${field}.grpc_service`) : httpServiceOf(config.http_service, `${field}.http_service`),
    wantsBody: isObject(config.with_request_body),
  };
}

function httpServiceOf(value: unknown, field: string): HttpServiceConfig {
  const service = asObject(value, field);
  const uri = asObject(service.server_uri, `${field}.server_uri`);
  const request = optionalObject(service.authorization_request, `${field}.authorization_request`);
  const response = optionalObject(service.authorization_response, `${field}.authorization_response`);
  const rf = `${field}.authorization_response`;
  return {
    kind: 'http',
    cluster: requiredString(uri.cluster, `${field}.server_uri.cluster`),
    timeoutMs: durationMs(uri.timeout, `${field}.server_uri.timeout`) ?? 200,
    pathPrefix: asString(service.path_prefix, `${field}.path_prefix`),
    headersToAdd: asList(request?.headers_to_add, `${field}.authorization_request.headers_to_add`).map((h, i) => {
      const at = `${field}.authorization_request.headers_to_add[${i}]`;
      const header = asObject(h, at);
      return { key: requiredString(header.key, `${at}.key`).toLowerCase(), value: asString(header.value, `${at}.value`) };
    }),
    toUpstream: listMatcher(response?.allowed_upstream_headers, `${rf}.allowed_upstream_headers`),
    toUpstreamAppend: listMatcher(response?.allowed_upstream_headers_to_append, `${rf}.allowed_upstream_headers_to_append`),
    toClientOnDeny: listMatcher(response?.allowed_client_headers, `${rf}.allowed_client_headers`),
    toClientOnSuccess: listMatcher(response?.allowed_client_headers_on_success, `${rf}.allowed_client_headers_on_success`),
  };
}

function grpcServiceOf(value: unknown, field: string): GrpcServiceConfig {
  const service = asObject(value, field);
  if (has(service, 'google_grpc')) fail(`${field}.google_grpc`, 'is not supported by the built-in proxy (use envoy_grpc with a cluster)');
  const envoy = asObject(service.envoy_grpc, `${field}.envoy_grpc`);
  loadAuthorizationProtos();
  return {
    kind: 'grpc',
    cluster: requiredString(envoy.cluster_name, `${field}.envoy_grpc.cluster_name`),
    authority: asString(envoy.authority, `${field}.envoy_grpc.authority`),
    timeoutMs: durationMs(service.timeout, `${field}.timeout`) ?? 200,
  };
}

/** What the server decided, in the proxy's terms. */
type Decision =
  | { kind: 'allowed'; set: Record<string, string>; append: Record<string, string>; remove: string[]; toClient: Record<string, string | string[]> }
  | { kind: 'denied'; status: number; body: string; headers: Record<string, string | string[]> }
  | { kind: 'error'; reason: string };

export class ExtAuthzHttpFilter implements HttpFilter {
  /** Headers for the client's response, by the request they were allowed for. */
  private readonly onSuccess = new WeakMap<ProxyHttpRequest, Record<string, string | string[]>>();
  private readonly clusters: ClusterHttpClient;
  private readonly grpc: AuthorizationClients | undefined;

  constructor(
    readonly name: string,
    private readonly config: ExtAuthzConfig,
    private readonly context: FilterContext,
  ) {
    if (!context.clusters) throw new Error(`${name}: this proxy cannot reach clusters from a filter`);
    this.clusters = context.clusters;
    if (config.service.kind === 'grpc') this.grpc = new AuthorizationClients();
    if (config.wantsBody) context.log('warn', `${name}: with_request_body is set, but the built-in proxy sends checks without the request body`);
  }

  async onRequest(request: ProxyHttpRequest): Promise<FilterOutcome> {
    if (this.config.enabled && !this.config.enabled(request.metadata)) return CONTINUE;
    const decision = this.config.service.kind === 'grpc' ? await this.checkGrpc(request, this.config.service) : await this.checkHttp(request, this.config.service);
    switch (decision.kind) {
      case 'allowed':
        for (const name of decision.remove) delete request.headers[name];
        for (const [name, value] of Object.entries(decision.set)) request.headers[name] = value;
        for (const [name, value] of Object.entries(decision.append)) request.headers[name] = request.headers[name] ? `${request.headers[name]},${value}` : value;
        if (Object.keys(decision.toClient).length > 0) this.onSuccess.set(request, decision.toClient);
        return CONTINUE;
      case 'denied':
        this.context.log('debug', `${this.name}: denied ${request.method} ${request.path} with ${decision.status}`);
        return { kind: 'respond', status: decision.status, body: decision.body, headers: decision.headers };
      case 'error':
        if (this.config.failureModeAllow) {
          this.context.log('warn', `${this.name}: ${decision.reason}; allowed (failure_mode_allow)`);
          if (this.config.failureModeAllowHeaderAdd) request.headers['x-envoy-auth-failure-mode-allowed'] = 'true';
          return CONTINUE;
        }
        this.context.log('warn', `${this.name}: ${decision.reason}; answered ${this.config.statusOnError}`);
        return { kind: 'respond', status: this.config.statusOnError, body: '' };
    }
  }

  onResponse(response: ProxyHttpResponse, request: ProxyHttpRequest): void {
    const headers = this.onSuccess.get(request);
    if (headers) Object.assign(response.headers, headers);
  }

  close(): void {
    this.grpc?.close();
  }

  /** The request headers the server may see: the allowed ones (`always` besides), never a disallowed one. */
  private checkHeaders(request: ProxyHttpRequest, always: ReadonlySet<string>, allByDefault: boolean): Record<string, string> {
    const headers: Record<string, string> = {};
    for (const [name, value] of Object.entries(request.headers)) {
      if (name.startsWith(':')) continue;
      const allowed = always.has(name) || (this.config.allowedHeaders ? this.config.allowedHeaders(name) : allByDefault);
      if (allowed && !this.config.disallowedHeaders?.(name)) headers[name] = value;
    }
    return headers;
  }

  private async checkHttp(request: ProxyHttpRequest, http: HttpServiceConfig): Promise<Decision> {
    const headers = this.checkHeaders(request, ALWAYS_SENT, false);
    headers.host = request.headers[':authority'] ?? headers.host ?? '';
    for (const { key, value } of http.headersToAdd) headers[key] = value;
    let response: ClusterResponse;
    try {
      response = await this.clusters.request(http.cluster, { method: request.method, path: http.pathPrefix + request.path, headers, timeoutMs: http.timeoutMs });
    } catch (err) {
      return { kind: 'error', reason: `authorization server unavailable: ${(err as Error).message}` };
    }
    if (response.status >= 500) return { kind: 'error', reason: `authorization server answered ${response.status}` };
    if (response.status !== 200) {
      return { kind: 'denied', status: response.status, body: response.body.toString('utf8'), headers: this.clientHeadersOnDeny(response, http) };
    }
    const decision: Decision = { kind: 'allowed', set: {}, append: {}, remove: [], toClient: {} };
    for (const [name, value] of Object.entries(response.headers)) {
      if (OWN_HEADERS.has(name)) continue;
      const text = Array.isArray(value) ? value.join(',') : value;
      if (http.toUpstream?.(name)) decision.set[name] = text;
      else if (http.toUpstreamAppend?.(name)) decision.append[name] = text;
      if (http.toClientOnSuccess?.(name)) decision.toClient[name] = value;
    }
    return decision;
  }

  private clientHeadersOnDeny(response: ClusterResponse, http: HttpServiceConfig): Record<string, string | string[]> {
    const wanted = http.toClientOnDeny;
    const out: Record<string, string | string[]> = {};
    for (const [name, value] of Object.entries(response.headers)) {
      if (OWN_HEADERS.has(name)) continue;
      if (!wanted || wanted(name) || ALWAYS_TO_CLIENT.includes(name)) out[name] = value;
    }
    return out;
  }

  private async checkGrpc(request: ProxyHttpRequest, grpc: GrpcServiceConfig): Promise<Decision> {
    const c = request.connection;
    const socket = (address: string, port: number) => ({ address: { socket_address: { address, port_value: port } } });
    const check = {
      attributes: {
        source: { ...socket(c.remoteAddress, c.remotePort), ...(c.peerPrincipal ? { principal: c.peerPrincipal } : {}) },
        destination: socket(c.localAddress, c.localPort),
        request: {
          http: {
            id: request.headers['x-request-id'] ?? '',
            method: request.method,
            headers: { ...this.checkHeaders(request, new Set(), true), ':authority': request.headers[':authority'] ?? '', ':method': request.method, ':path': request.path },
            path: request.path,
            host: request.headers[':authority'] ?? '',
            scheme: request.headers[':scheme'] ?? 'http',
            protocol: 'HTTP/1.1',
          },
        },
      },
    };
    let response: Record<string, unknown>;
    try {
      response = await this.grpc!.check(this.clusters.target(grpc.cluster), grpc.authority, check, grpc.timeoutMs);
    } catch (err) {
      return { kind: 'error', reason: `authorization server unavailable: ${(err as Error).message}` };
    }
    const status = Number((response.status as { code?: number } | undefined)?.code ?? 0);
    if (status === 0) {
      const ok = (response.ok_response ?? {}) as Record<string, unknown>;
      const decision: Decision = { kind: 'allowed', set: {}, append: {}, remove: ((ok.headers_to_remove ?? []) as string[]).map((h) => h.toLowerCase()), toClient: {} };
      for (const option of (ok.headers ?? []) as HeaderValueOption[]) {
        const { name, value, append } = headerOption(option);
        (append ? decision.append : decision.set)[name] = value;
      }
      for (const option of (ok.response_headers_to_add ?? []) as HeaderValueOption[]) {
        const { name, value } = headerOption(option);
        decision.toClient[name] = value;
      }
      return decision;
    }
    const denied = (response.denied_response ?? {}) as { status?: { code?: unknown }; headers?: HeaderValueOption[]; body?: string };
    const headers: Record<string, string> = {};
    for (const option of denied.headers ?? []) {
      const { name, value } = headerOption(option);
      headers[name] = value;
    }
    return { kind: 'denied', status: deniedStatus(denied.status), body: denied.body ?? '', headers };
  }
}

/** The DeniedHttpResponse's status; 403 when it gives none Envoy could send. */
function deniedStatus(status: { code?: unknown } | undefined): number {
  try {
    return status?.code !== undefined ? statusOf(status, 'denied_response.status') : 403;
  } catch {
    return 403;
  }
}

/** envoy.config.core.v3.HeaderValueOption, as decoded. */
interface HeaderValueOption {
  header?: { key?: string; value?: string };
  append?: { value?: boolean } | boolean;
  append_action?: string;
}

/** A header change of a Check answer: append when `append` (or an append action) says so. */
function headerOption(option: HeaderValueOption): { name: string; value: string; append: boolean } {
  const append = option.append_action ? option.append_action === 'APPEND_IF_EXISTS_OR_ADD' : typeof option.append === 'object' ? option.append?.value === true : option.append === true;
  return { name: String(option.header?.key ?? '').toLowerCase(), value: String(option.header?.value ?? ''), append };
}
