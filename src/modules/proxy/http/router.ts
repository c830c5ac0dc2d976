/**
 * The terminal HTTP filter: forwards a routed request to an endpoint of the route's cluster
 * and streams the answer back, with Envoy's local replies when it cannot (503 without a
 * healthy upstream or on connect failure, 504 on timeout).
 */
import type * as http from 'node:http';
import type { Dispatcher } from 'undici';
import type { HttpFilter, ProxyHttpRequest } from './filter-api';
import { CONNECT_TIMEOUT_CODE, UpstreamEndpoint, UpstreamPools } from '../upstream/upstream-pools';
import { durationMs } from '../filters/shared/config';
import { ClusterManager } from '../upstream/cluster-manager';
import type { Decoded } from '../xds/xds-client';
import { sendLocalReply } from './local-reply';
import { endResponse } from './response-flush';
import { regexRewriteOf } from './regex-rewrite';
import type { ProxyLogger } from '../logging/proxy-loggers';

/** Headers that belong to one hop and are not forwarded. */
const HOP_BY_HOP = new Set(['connection', 'keep-alive', 'proxy-connection', 'transfer-encoding', 'upgrade', 'te', 'trailer']);
/** Not forwarded either: the downstream side already answered `100 Continue` (node:http does). */
const NOT_FORWARDED = new Set([...HOP_BY_HOP, 'expect']);
const DEFAULT_ROUTE_TIMEOUT_MS = 15_000;

export interface RoutedRequest {
  method: string;
  path: string;
  headers: Record<string, string>;
}

export class Router {
  /** Connections to upstreams are kept and reused across requests. */
  private readonly pools = new UpstreamPools();

  /** Envoy's `router` logger, once the proxy has its loggers. */
  private log?: ProxyLogger;

  constructor(private readonly clusters: ClusterManager) {}

  useLogger(log: ProxyLogger): void {
    this.log = log;
  }

  /** Runs the action of `route` for the request; `responseFilters` see the upstream's answer before it goes downstream. */
  forward(route: Decoded, virtualHost: Decoded, request: ProxyHttpRequest, req: http.IncomingMessage, res: http.ServerResponse, responseFilters?: readonly HttpFilter[]): void {
    if (route.direct_response) {
      const body = route.direct_response.body?.inline_string ?? '';
      sendLocalReply(res, Number(route.direct_response.status), body);
      req.resume();
      return;
    }
    if (route.redirect) {
      this.redirect(route.redirect, request, res);
      req.resume();
      return;
    }
    const action = route.route;
    if (!action) {
      sendLocalReply(res, 404, '');
      req.resume();
      return;
    }
    const clusterName = this.clusterOf(action, request);
    const cluster = clusterName ? this.clusters.cluster(clusterName) : undefined;
    if (!clusterName || !cluster) {
      sendLocalReply(res, Number(action.cluster_not_found_response_code === 'NOT_FOUND' ? 404 : 503), '');
      req.resume();
      return;
    }
    const endpoint = this.clusters.pick(clusterName);
    if (!endpoint) {
      this.log?.debug(() => `cluster '${clusterName}' has no healthy upstream for ${request.method} ${request.path}: 503`);
      sendLocalReply(res, 503, 'no healthy upstream');
      req.resume();
      return;
    }
    const headers = upstreamHeaders(request, virtualHost, route, action);
    const path = rewritePath(action, route.match ?? {}, request.path);
    const timeoutMs = durationMs(action.timeout, 'route.timeout') ?? DEFAULT_ROUTE_TIMEOUT_MS;
    this.log?.debug(() => `cluster '${clusterName}' match for URL '${request.path}': ${request.method} to ${endpoint.address}:${endpoint.port}`);
    const transport = this.clusters.transportFor(clusterName, endpoint);
    const pool = this.pools.poolFor(endpoint, transport, cluster.connectTimeoutMs);
    if (!pool) {
      sendResetReply(res, 'TLS secrets not ready');
      req.resume();
      return;
    }
    const exchange = new UpstreamExchange(res, { virtualHost, route, responseFilters, request, endpoint, log: this.log });
    if (timeoutMs > 0) exchange.deadline(timeoutMs);
    res.on('close', () => {
      if (!res.writableFinished) exchange.abort();
    });
    // Most requests have no body: the request goes out at once; a body (a length or chunked) is
    // streamed to the upstream as it comes.
    const body = hasBody(req) ? req : null;
    if (!body) req.resume();
    pool.dispatch({ method: request.method, path, headers, body }, exchange);
  }

  close(): void {
    this.pools.close();
  }

  private clusterOf(action: Decoded, request: RoutedRequest): string | undefined {
    if (action.cluster) return String(action.cluster);
    if (action.cluster_header) return request.headers[String(action.cluster_header).toLowerCase()];
    const weighted = (action.weighted_clusters?.clusters ?? []) as Decoded[];
    const total = weighted.reduce((n, c) => n + Number(c.weight?.value ?? c.weight ?? 0), 0);
    if (total <= 0) return undefined;
    let r = Math.random() * total;
    for (const c of weighted) {
      r -= Number(c.weight?.value ?? c.weight ?? 0);
      if (r < 0) return String(c.name);
    }
    return String(weighted[weighted.length - 1].name);
  }

  private redirect(redirect: Decoded, request: RoutedRequest, res: http.ServerResponse): void {
    const codes: Record<string, number> = { MOVED_PERMANENTLY: 301, FOUND: 302, SEE_OTHER: 303, TEMPORARY_REDIRECT: 307, PERMANENT_REDIRECT: 308 };
    const authority = request.headers[':authority'] ?? '';
    const scheme = redirect.https_redirect ? 'https' : (redirect.scheme_redirect ?? request.headers[':scheme'] ?? 'http');
    let host = redirect.host_redirect ?? authority.replace(/:\d+$/, '');
    if (redirect.port_redirect) host = `${host}:${redirect.port_redirect}`;
    else if (!redirect.host_redirect && /:\d+$/.test(authority)) host = authority;
    const path = redirect.path_redirect ?? (redirect.prefix_rewrite !== undefined ? request.path : request.path);
    res.writeHead(codes[String(redirect.response_code ?? 'MOVED_PERMANENTLY')] ?? 301, { location: `${scheme}://${host}${path}`, 'content-length': '0' });
    endResponse(res);
  }
}

interface ExchangeContext {
  virtualHost: Decoded;
  route: Decoded;
  responseFilters?: readonly HttpFilter[];
  request: ProxyHttpRequest;
  endpoint: UpstreamEndpoint;
  log?: ProxyLogger;
}

/**
 * One request's upstream side (an undici dispatch handler): the answer's status and headers
 * (response header ops and filters applied) go downstream, then its body with the upstream's
 * pace (paused while the downstream connection is full). Before the answer starts, a failure
 * is Envoy's local 503 and the route timeout a 504; after, the downstream connection is reset.
 */
class UpstreamExchange implements Dispatcher.DispatchHandler {
  private controller?: Dispatcher.DispatchController;
  private timer?: NodeJS.Timeout;
  /** Set once the exchange is over for the downstream side (answered, timed out, aborted). */
  private finished = false;
  /** Bytes of body still to come when the upstream gave a length: the last chunk ends the response in the same write. */
  private remaining = -1;

  constructor(
    private readonly res: http.ServerResponse,
    private readonly context: ExchangeContext,
  ) {}

  deadline(ms: number): void {
    this.timer = setTimeout(() => {
      this.stop();
      sendLocalReply(this.res, 504, 'upstream request timeout');
    }, ms);
  }

  /** The downstream went away: the upstream request is abandoned. */
  abort(): void {
    this.stop();
  }

  onRequestStart(controller: Dispatcher.DispatchController): void {
    this.controller = controller;
    if (this.finished) controller.abort(new Error(ABANDONED));
  }

  onResponseStart(_controller: Dispatcher.DispatchController, status: number, received: Record<string, string | string[]>): void {
    if (status < 200 || this.finished) return;
    clearTimeout(this.timer);
    const { virtualHost, route, responseFilters, request, endpoint, log } = this.context;
    const res = this.res;
    const out: Record<string, string | string[]> = {};
    for (const k in received) if (!HOP_BY_HOP.has(k)) out[k] = received[k];
    applyHeaderOps(out, [virtualHost, route], 'response');
    log?.debug(() => `upstream ${endpoint.address}:${endpoint.port} answered ${request.method} ${request.path}: ${status}`);
    const length = received['content-length'];
    if (typeof length === 'string' && request.method !== 'HEAD') this.remaining = Number(length);
    if (responseFilters) {
      const response = { status, headers: out };
      try {
        for (const f of responseFilters) f.onResponse!(response, request);
        res.writeHead(response.status, out);
      } catch (e) {
        // As a failing request filter: a local 500 rather than a half-written response.
        this.stop();
        sendLocalReply(res, 500, `filter error: ${e instanceof Error ? e.message : String(e)}`);
      }
      return;
    }
    res.writeHead(status, out);
  }

  onResponseData(controller: Dispatcher.DispatchController, chunk: Buffer): void {
    if (this.finished) return;
    if (this.remaining >= 0) {
      this.remaining -= chunk.length;
      if (this.remaining <= 0) {
        this.finished = true;
        endResponse(this.res, chunk);
        return;
      }
    }
    if (!this.res.write(chunk)) {
      controller.pause();
      this.res.once('drain', () => controller.resume());
    }
  }

  onResponseEnd(): void {
    if (this.finished) return;
    this.finished = true;
    endResponse(this.res);
  }

  onResponseError(_controller: Dispatcher.DispatchController, error: Error & { code?: string }): void {
    clearTimeout(this.timer);
    if (this.finished) return;
    this.finished = true;
    const code = error.code ?? (error.cause as { code?: string } | undefined)?.code;
    const reason = code === CONNECT_TIMEOUT_CODE ? 'connection timeout' : code === 'ECONNREFUSED' || code === 'EHOSTUNREACH' || code === 'ETIMEDOUT' ? 'connection failure' : 'remote reset';
    const { request, endpoint, log } = this.context;
    log?.debug(() => `upstream ${endpoint.address}:${endpoint.port} failed for ${request.method} ${request.path}: ${error.message} (${reason})`);
    if (!this.res.headersSent) sendResetReply(this.res, reason);
    else this.res.destroy();
  }

  /** Ends the upstream side: the request is aborted if it started, or will be when it starts. */
  private stop(): void {
    clearTimeout(this.timer);
    if (this.finished) return;
    this.finished = true;
    this.controller?.abort(new Error(ABANDONED));
  }
}

const ABANDONED = 'the downstream request ended';

/** Envoy's local 503 when the upstream could not be reached or reset before answering. */
function sendResetReply(res: http.ServerResponse, reason: string): void {
  sendLocalReply(res, 503, `upstream connect error or disconnect/reset before headers. reset reason: ${reason}`);
}

function hasBody(req: http.IncomingMessage): boolean {
  const length = req.headers['content-length'];
  return req.headers['transfer-encoding'] !== undefined || (length !== undefined && length !== '0');
}

function upstreamHeaders(request: RoutedRequest, virtualHost: Decoded, route: Decoded, action: Decoded): Record<string, string | string[]> {
  const headers: Record<string, string | string[]> = {};
  const from = request.headers;
  for (const k in from) if (k.charCodeAt(0) !== 58 /* ':' */ && !NOT_FORWARDED.has(k)) headers[k] = from[k];
  headers.host = action.host_rewrite_literal ?? request.headers[':authority'] ?? '';
  headers['x-forwarded-proto'] ??= request.headers[':scheme'] ?? 'http';
  applyHeaderOps(headers, [virtualHost, route], 'request');
  return headers;
}

/** `request_headers_to_add` / `_remove` (and the response ones) of the virtual host, then the route. */
const HEADER_OP_FIELDS = {
  request: { remove: 'request_headers_to_remove', add: 'request_headers_to_add' },
  response: { remove: 'response_headers_to_remove', add: 'response_headers_to_add' },
} as const;

function applyHeaderOps(headers: Record<string, string | string[]>, levels: Decoded[], side: 'request' | 'response'): void {
  const fields = HEADER_OP_FIELDS[side];
  for (const level of levels) {
    const remove = level[fields.remove] as string[] | undefined;
    const add = level[fields.add] as Decoded[] | undefined;
    if (!remove && !add) continue;
    for (const name of remove ?? []) delete headers[name.toLowerCase()];
    for (const op of add ?? []) {
      const key = String(op.header?.key ?? '').toLowerCase();
      // A hop's own headers are the connection's business, not a route's.
      if (NOT_FORWARDED.has(key)) continue;
      const value = String(op.header?.value ?? '');
      const append = op.append_action ? op.append_action === 'APPEND_IF_EXISTS_OR_ADD' : op.append?.value !== false;
      const existing = headers[key];
      if (op.append_action === 'ADD_IF_ABSENT' && existing !== undefined) continue;
      headers[key] = append && existing !== undefined ? [...(Array.isArray(existing) ? existing : [existing]), value] : value;
    }
  }
}

function rewritePath(action: Decoded, match: Decoded, path: string): string {
  if (action.prefix_rewrite !== undefined && match.prefix !== undefined) return String(action.prefix_rewrite) + path.slice(String(match.prefix).length);
  if (action.prefix_rewrite !== undefined && match.path !== undefined) {
    const q = path.indexOf('?');
    return String(action.prefix_rewrite) + (q >= 0 ? path.slice(q) : '');
  }
  if (action.regex_rewrite) {
    // Envoy rewrites the path without its query, which is kept as it was.
    const q = path.indexOf('?');
    const bare = q >= 0 ? path.slice(0, q) : path;
    return regexRewriteOf(action, 'route.regex_rewrite')(bare) + (q >= 0 ? path.slice(q) : '');
  }
  return path;
}
