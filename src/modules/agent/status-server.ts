/**
 * The agent's status port (PROXY_STATUS_PORT): `/healthz/ready` answers 200 once the proxy has
 * applied its first configuration, 503 with the reason before, as `pilot-agent wait` expects.
 */
import * as http from 'node:http';
import { listenOn } from '../monitoring/listen-address';
import { stopHttpServer } from '../monitoring/http-lifecycle';

export interface Readiness {
  /** undefined when ready, else why not. */
  notReadyReason(): Promise<string | undefined> | string | undefined;
}

export class StatusServer {
  private readonly server = http.createServer((req, res) => void this.handle(req, res));

  constructor(private readonly readiness: Readiness) {}

  async start(host: string, port: number): Promise<number> {
    return (await listenOn(this.server, { host, port }, 'status server')).port;
  }

  stop(): Promise<void> {
    return stopHttpServer(this.server);
  }

  private async handle(req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
    const path = (req.url ?? '/').split('?')[0];
    if (path !== '/healthz/ready') {
      res.writeHead(404, { 'content-type': 'text/plain' }).end(`unknown path ${path}; try /healthz/ready\n`);
      return;
    }
    const reason = await this.readiness.notReadyReason();
    if (reason === undefined) res.writeHead(200, { 'content-type': 'text/plain' }).end('ready\n');
    else res.writeHead(503, { 'content-type': 'text/plain' }).end(`not ready: ${reason}\n`);
  }
}
