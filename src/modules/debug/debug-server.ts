import * as http from 'node:http';
import { inject, injectable } from 'inversify';
import { stopHttpServer } from '../monitoring/http-lifecycle';
import { ListenAddress, listenOn } from '../monitoring/listen-address';

/** What a debug handler answers: `json` (pretty-printed) wins over `text`, `raw` over both; status defaults to 200. */
export interface DebugResponse {
  status?: number;
  json?: unknown;
  text?: string;
  /** A body sent as is with its own content type (a profile, a page). */
  raw?: { contentType: string; body: Buffer | string; headers?: Record<string, string> };
}

/** One debug endpoint, mounted at `path` (which must start with `/debug/`). */
export interface DebugHandler {
  path: string;
  description: string;
  /** `signal` aborts when the client goes away before the answer (long requests stop early). */
  handle(query: URLSearchParams, signal: AbortSignal): Promise<DebugResponse> | DebugResponse;
}

/** `true`/`false`, or a reason shown in the 503 body while not ready. */
export type Readiness = boolean | { ready: boolean; reason?: string };

/** Bound by the program that serves the debug interface (the daemon's discovery module). */
export const DebugHttpServerOptionsToken = Symbol.for('mesh.DebugHttpServerOptions');
export interface DebugHttpServerOptions {
  /** From `--httpAddr` (see parseListenAddress). */
  address: ListenAddress;
  isReady: () => Readiness | Promise<Readiness>;
  /** ENABLE_DEBUG_ON_HTTP. */
  debugEnabled: boolean;
  handlers?: readonly DebugHandler[];
  /** Told about handlers that throw; the client gets a 500 either way. */
  onHandlerError?: (path: string, err: unknown) => void;
}

const DISABLED = 'the debug interface is disabled by ENABLE_DEBUG_ON_HTTP=false\n';

/**
 * The daemon's plain HTTP server (`--httpAddr`, default `:8080`): `GET /ready` always, and the
 * `/debug/...` interface unless ENABLE_DEBUG_ON_HTTP is false.
 */
@injectable()
export class DebugHttpServer {
  private readonly server: http.Server;
  /** The request handling alone, to mount on another server (the monitoring port). */
  readonly listener: http.RequestListener = (req, res) => void this.handle(req, res);
  private readonly handlers = new Map<string, DebugHandler>();

  constructor(@inject(DebugHttpServerOptionsToken) private readonly options: DebugHttpServerOptions) {
    for (const handler of options.handlers ?? []) {
      if (!handler.path.startsWith('/debug/')) throw new Error(`debug handler path "${handler.path}" must start with /debug/`);
      if (this.handlers.has(handler.path)) throw new Error(`debug handler path "${handler.path}" is registered twice`);
      this.handlers.set(handler.path, handler);
    }
    this.server = http.createServer(this.listener);
  }

  start(): Promise<ListenAddress> {
    return listenOn(this.server, this.options.address, 'HTTP debug server');
  }

  /** Stops accepting connections and drops idle keep-alive ones so shutdown is not held up by clients. */
  stop(): Promise<void> {
    return stopHttpServer(this.server);
  }

  private async handle(req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
    // Split by hand: new URL() would read `//x/y` as host x, and throws on odd absolute forms.
    const [pathname, search = ''] = (req.url ?? '/').split(/\?(.*)/s);
    const url = { pathname, searchParams: new URLSearchParams(search) };
    // HEAD is GET without the body (node drops it), so it is allowed too.
    if (req.method !== 'GET' && req.method !== 'HEAD') {
      res.setHeader('Allow', 'GET, HEAD');
      return write(res, { status: 405, text: `method ${req.method} not allowed\n` });
    }
    const abort = new AbortController();
    res.once('close', () => {
      if (!res.writableFinished) abort.abort();
    });
    try {
      const response = await this.route(url, abort.signal);
      if (abort.signal.aborted) return;
      write(res, response);
    } catch (err) {
      this.options.onHandlerError?.(url.pathname, err);
      // Headers may be out already if the body failed mid-way; then only the socket can tell.
      if (res.headersSent) res.destroy();
      else write(res, { status: 500, text: `${url.pathname}: ${err instanceof Error ? err.message : String(err)}\n` });
    }
  }

  private async route(url: { pathname: string; searchParams: URLSearchParams }, signal: AbortSignal): Promise<DebugResponse> {
    const path = url.pathname.length > 1 ? url.pathname.replace(/\/+$/, '') : url.pathname;
    if (path === '/ready') return this.ready();
    if (path === '/debug' || path.startsWith('/debug/')) {
      if (!this.options.debugEnabled) return { status: 404, text: DISABLED };
      if (path === '/debug') return { json: this.index() };
      const handler = this.handlers.get(path);
      if (handler) return handler.handle(url.searchParams, signal);
    }
    return { status: 404, text: '404 page not found\n' };
  }

  private async ready(): Promise<DebugResponse> {
    const state = await this.options.isReady();
    const { ready, reason } = typeof state === 'boolean' ? { ready: state, reason: undefined } : state;
    return ready ? { text: 'ready\n' } : { status: 503, text: `not ready: ${reason || 'starting'}\n` };
  }

  private index(): { path: string; description: string }[] {
    return [...this.handlers.values()]
      .map(({ path, description }) => ({ path, description }))
      .sort((a, b) => a.path.localeCompare(b.path));
  }
}

function write(res: http.ServerResponse, response: DebugResponse): void {
  let body: string;
  let contentType: string;
  if (response.raw) {
    const { contentType: type, body: raw, headers } = response.raw;
    res.writeHead(response.status ?? 200, { ...headers, 'Content-Type': type, 'Content-Length': Buffer.byteLength(raw) });
    res.end(raw);
    return;
  }
  if (response.json !== undefined) {
    // Serialise before writing headers so a value that cannot be serialised becomes a clean 500.
    body = `${JSON.stringify(response.json, null, 2) ?? 'null'}\n`;
    contentType = 'application/json';
  } else {
    body = response.text ?? '';
    contentType = 'text/plain; charset=utf-8';
  }
  res.writeHead(response.status ?? 200, { 'Content-Type': contentType, 'Content-Length': Buffer.byteLength(body) });
  res.end(body);
}
