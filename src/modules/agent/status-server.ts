/**
 * The agent's status port (PROXY_STATUS_PORT with the built-in proxy; ProxyConfig `statusPort`
 * behind Envoy's readiness listener): `/healthz/ready` answers 200 once the proxy has applied
 * its first configuration, 503 with the reason before, as `pilot-agent wait` expects; and
 * `/app-health/<container>/<livez|readyz|startupz>` runs the application probe configured in
 * MESH_ORCH_APP_PROBERS; `/stats/prometheus` serves the agent's own metrics.
 */
import * as http from 'node:http';
import { listenOn } from '../monitoring/listen-address';
import { stopHttpServer } from '../monitoring/http-lifecycle';
import { AppProbeHandler, AppProbeHandlerOptions, AppProbers } from './probes';

export interface Readiness {
  /** undefined when ready, else why not. */
  notReadyReason(): Promise<string | undefined> | string | undefined;
}

export interface StatusServerOptions extends AppProbeHandlerOptions {
  /** The application's probes (`parseAppProbers(MESH_ORCH_APP_PROBERS)`); none by default. */
  appProbers?: AppProbers;
  /** The agent's metrics, for `/stats/prometheus`. */
  metrics?: { contentType: string; metrics(): Promise<string> };
}

const READY_PATH = '/healthz/ready';
const METRICS_PATH = '/stats/prometheus';

export class StatusServer {
  private readonly server = http.createServer((req, res) => void this.handle(req, res));
  private readonly appProbes: AppProbeHandler;

  constructor(
    private readonly readiness: Readiness,
    private readonly options: StatusServerOptions = {},
  ) {
    this.appProbes = new AppProbeHandler(options.appProbers ?? new Map(), options);
  }

  async start(host: string, port: number): Promise<number> {
    return (await listenOn(this.server, { host, port }, 'status server')).port;
  }

  stop(): Promise<void> {
    return stopHttpServer(this.server);
  }

  private async handle(req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
    const path = (req.url ?? '/').split('?')[0];
    try {
      if (path === READY_PATH) await this.ready(res);
      else if (path === METRICS_PATH && this.options.metrics) res.writeHead(200, { 'content-type': this.options.metrics.contentType }).end(await this.options.metrics.metrics());
      else if (this.appProbes.handles(path)) await this.appProbes.handle(path, req, res);
      else res.writeHead(404, { 'content-type': 'text/plain' }).end(`unknown path ${path}; try ${READY_PATH}, ${METRICS_PATH} or ${'/app-health/<container>/<livez|readyz|startupz>'}\n`);
    } catch (e) {
      if (!res.headersSent) res.writeHead(500, { 'content-type': 'text/plain' });
      res.end(`status server error: ${(e as Error).message}\n`);
    }
  }

  private async ready(res: http.ServerResponse): Promise<void> {
    const reason = await this.readiness.notReadyReason();
    if (reason === undefined) res.writeHead(200, { 'content-type': 'text/plain' }).end('ready\n');
    else res.writeHead(503, { 'content-type': 'text/plain' }).end(`not ready: ${reason}\n`);
  }
}
