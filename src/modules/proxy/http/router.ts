/**
 * The terminal HTTP filter: forwards a routed request to an endpoint of the route's cluster
 * and streams the answer back, with Envoy's local replies when it cannot (503 without a
 * healthy upstream or on connect failure, 504 on timeout).
 */
import * as http from 'node:http';
import * as https from 'node:https';
import type { SecureContext } from 'node:tls';
import type { HttpFilter, ProxyHttpRequest } from './filter-api';
import { UpstreamTransport } from '../tls/transport-sockets';
import { durationMs } from '../filters/shared/config';
import { ClusterManager } from '../upstream/cluster-manager';
import type { Decoded } from '../xds/xds-client';
import { sendLocalReply } from './local-reply';
import { regexRewriteOf } from './regex-rewrite';
import type { ProxyLogger } from '../logging/proxy-loggers';

/** Headers that belong to one hop and are not forwarded. */
const HOP_BY_HOP = new Set(['connection', 'keep-alive', 'proxy-connection', 'transfer-encoding', 'upgrade', 'te', 'trailer']);
const DEFAULT_ROUTE_TIMEOUT_MS = 15_000;

export interface RoutedRequest {
  method: string;
  path: string;
  headers: Record<string, string>;
}

export class Router {
  /** Connections to upstreams are kept and reused across requests. */
  private readonly agent = new http.Agent({ keepAlive: true, maxSockets: 1024 });
  /** One pool per cluster TLS context, replaced when its certificates change. */
  private readonly tlsAgents = new Map<UpstreamTransport, { context: SecureContext; agent: https.Agent }>();

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
    if (!clusterName || !this.clusters.cluster(clusterName)) {
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
    const tls = this.clusters.transportFor(clusterName, endpoint);
    let upstream: http.ClientRequest;
    if (tls) {
      const agent = this.tlsAgent(tls);
      if (!agent) {
        sendLocalReply(res, 503, 'upstream connect error or disconnect/reset before headers. reset reason: TLS secrets not ready');
        req.resume();
        return;
      }
      upstream = https.request({ host: endpoint.address, port: endpoint.port, method: request.method, path, headers, agent });
    } else {
      upstream = http.request({ host: endpoint.address, port: endpoint.port, method: request.method, path, headers, agent: this.agent });
    }
    let timer: NodeJS.Timeout | undefined;
    if (timeoutMs > 0) {
      timer = setTimeout(() => {
        upstream.destroy();
        sendLocalReply(res, 504, 'upstream request timeout');
      }, timeoutMs);
    }
    upstream.on('response', (answer) => {
      clearTimeout(timer);
      const out: Record<string, string | string[]> = {};
      const received = answer.headers;
      for (const k in received) {
        const v = received[k];
        if (v !== undefined && !HOP_BY_HOP.has(k)) out[k] = v;
      }
      applyHeaderOps(out, [virtualHost, route], 'response');
      const status = answer.statusCode ?? 502;
      this.log?.debug(() => `upstream ${endpoint.address}:${endpoint.port} answered ${request.method} ${request.path}: ${status}`);
      if (responseFilters) {
        const response = { status, headers: out };
        try {
          for (const f of responseFilters) f.onResponse!(response, request);
          res.writeHead(response.status, out);
        } catch (e) {
          // As a failing request filter: a local 500 rather than a half-written response.
          answer.resume();
          sendLocalReply(res, 500, `filter error: ${e instanceof Error ? e.message : String(e)}`);
          return;
        }
      } else {
        res.writeHead(status, out);
      }
      answer.pipe(res);
    });
    upstream.on('error', (e: NodeJS.ErrnoException) => {
      clearTimeout(timer);
      const reason = e.code === 'ECONNREFUSED' || e.code === 'EHOSTUNREACH' || e.code === 'ETIMEDOUT' ? 'connection failure' : 'remote reset';
      this.log?.debug(() => `upstream ${endpoint.address}:${endpoint.port} failed for ${request.method} ${request.path}: ${e.message} (${reason})`);
      if (!res.headersSent) sendLocalReply(res, 503, `upstream connect error or disconnect/reset before headers. reset reason: ${reason}`);
      else res.destroy();
    });
    res.on('close', () => {
      if (!res.writableFinished) upstream.destroy();
    });
    // Most requests have no body: ending the upstream request at once spares a pipe (and its
    // listeners) per request; a body (a length or chunked) is streamed as it comes.
    if (hasBody(req)) req.pipe(upstream);
    else {
      req.resume();
      upstream.end();
    }
  }

  close(): void {
    this.agent.destroy();
    for (const { agent } of this.tlsAgents.values()) agent.destroy();
    this.tlsAgents.clear();
  }

  private tlsAgent(tls: UpstreamTransport): https.Agent | undefined {
    const options = tls.connectOptions();
    if (!options) return undefined;
    const current = this.tlsAgents.get(tls);
    if (current && current.context === options.secureContext) return current.agent;
    current?.agent.destroy();
    const agent = new https.Agent({ keepAlive: true, maxSockets: 1024, ...options });
    this.tlsAgents.set(tls, { context: options.secureContext!, agent });
    return agent;
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
    res.end();
  }
}

function hasBody(req: http.IncomingMessage): boolean {
  const length = req.headers['content-length'];
  return req.headers['transfer-encoding'] !== undefined || (length !== undefined && length !== '0');
}

function upstreamHeaders(request: RoutedRequest, virtualHost: Decoded, route: Decoded, action: Decoded): Record<string, string | string[]> {
  const headers: Record<string, string | string[]> = {};
  const from = request.headers;
  for (const k in from) if (k.charCodeAt(0) !== 58 /* ':' */ && !HOP_BY_HOP.has(k)) headers[k] = from[k];
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
