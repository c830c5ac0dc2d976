/**
 * The built-in proxy's admin port (ProxyConfig proxyAdminPort, 127.0.0.1 only, as Envoy's is
 * meant to be), answering Envoy's admin paths the way Envoy does: the home page `/`, `/help`,
 * `/config_dump`, `/clusters`, `/listeners`, `/logging`, `/ready`, `/server_info` and `/stats`.
 * As in Envoy, a path is matched exactly (the query aside), an unknown one is a 404 with the
 * help text, and a path that changes state takes only POST.
 */
import * as http from 'node:http';
import { listenOn } from '../../monitoring/listen-address';
import { stopHttpServer } from '../../monitoring/http-lifecycle';
import type { BuiltInProxyView } from '../../proxy/builtin-proxy';
import { ProxyLoggers } from '../../proxy/logging/proxy-loggers';
import { configDumpHandler } from './config-dump';
import { AdminHandler, AdminResponse, helpText, json, text } from './handlers';
import { helpHandler, homePage } from './home';
import { loggingHandler } from './logging';
import { readyHandler, serverInfoHandler, statsHandler } from './server-state';

/** Bodies of POST requests are not read; this bounds what a client may send before it is cut off. */
const MAX_REQUEST_BODY = 64 * 1024;

export class BuiltInAdminServer {
  private readonly server = http.createServer((req, res) => this.serve(req, res));
  private readonly handlers: AdminHandler[];

  /** `version` is Envoy's `<revision>/<version>/<status>/<build type>/<TLS library>` form. */
  constructor(
    private readonly proxy: BuiltInProxyView,
    private readonly loggers: ProxyLoggers,
    version: string,
  ) {
    this.handlers = [
      { path: '/', help: 'Admin home page', mutates: false, handle: () => homePage(this.handlers, 'Mesh built-in proxy admin') },
      helpHandler(() => this.handlers),
      { path: '/clusters', help: 'upstream cluster status', mutates: false, params: [{ id: 'format', help: 'Format to use', choices: ['text', 'json'] }], handle: ({ url }) => this.clusters(url) },
      configDumpHandler(proxy, version),
      { path: '/listeners', help: 'print listener info', mutates: false, handle: () => json(this.proxy.boundListeners()) },
      loggingHandler(loggers),
      readyHandler(proxy),
      serverInfoHandler(proxy, version),
      statsHandler(proxy),
    ];
  }

  async start(port: number): Promise<number> {
    return (await listenOn(this.server, { host: '127.0.0.1', port }, 'proxy admin server')).port;
  }

  stop(): Promise<void> {
    return stopHttpServer(this.server);
  }

  private serve(req: http.IncomingMessage, res: http.ServerResponse): void {
    let received = 0;
    req.on('data', (chunk: Buffer) => {
      received += chunk.length;
      if (received > MAX_REQUEST_BODY) req.destroy();
    });
    let answer: AdminResponse;
    try {
      answer = this.answer(req.method ?? 'GET', new URL(req.url ?? '/', 'http://admin'));
    } catch (err) {
      answer = text(500, `admin error: ${(err as Error).message}\n`);
    }
    res.writeHead(answer.status, { 'content-type': answer.contentType, 'cache-control': 'no-cache, max-age=0', 'x-content-type-options': 'nosniff' });
    res.end(answer.body);
  }

  private answer(method: string, url: URL): AdminResponse {
    const handler = this.handlers.find((h) => h.path === url.pathname);
    if (!handler) return text(404, `invalid path. ${helpText(this.handlers)}`);
    // Reading /logging's levels changes nothing, so a GET without parameters is answered too.
    const readOnly = handler.path === '/logging' && [...url.searchParams.keys()].length === 0;
    if (handler.mutates && method !== 'POST' && !readOnly) {
      this.loggers.get('admin').error(`admin path "${handler.path}" mutates state, method=${method} rather than POST`);
      return text(405, `Method ${method} not allowed, POST required.`);
    }
    return handler.handle({ method, url });
  }

  private clusters(url: URL): AdminResponse {
    const statuses = this.proxy.clusterStatuses().map(({ name, endpoints }) => ({
      name,
      host_statuses: endpoints.map((e) => ({
        address: { socket_address: { address: e.address, port_value: e.port } },
        health_status: { eds_health_status: 'HEALTHY' },
        weight: e.weight,
      })),
    }));
    if (url.searchParams.get('format') === 'json') return json({ cluster_statuses: statuses });
    return text(
      200,
      statuses.flatMap((c) => c.host_statuses.map((h) => `${c.name}::${h.address.socket_address.address}:${h.address.socket_address.port_value}::health_flags::healthy\n`)).join(''),
    );
  }
}
