import * as http from 'node:http';
import { isIPv4 } from 'node:net';
import { inject, injectable } from 'inversify';
import { stopHttpServer } from './http-lifecycle';
import { ListenAddress, listenOn } from './listen-address';

/** Anything that renders Prometheus text: a DaemonMetrics or a bare prom-client Registry. */
export interface MetricsSource {
  readonly contentType: string;
  metrics(): Promise<string>;
}

/** Bound by the program that serves metrics (the daemon's discovery module). */
export const MonitoringServerOptionsToken = Symbol.for('mesh.MonitoringServerOptions');
export interface MonitoringServerOptions {
  /** From `--monitoringAddr` (see parseListenAddress). */
  address: ListenAddress;
  metrics: MetricsSource;
  /** METRICS_LOCALHOST_ACCESS_ONLY: refuse (403) scrapes not coming from a loopback address. */
  localhostOnly?: boolean;
  /**
   * Answers every other path (e.g. DebugHttpServer.listener: `pilot-discovery request` sends its
   * debug requests to this port, as the incumbent serves /debug here too). Without it: 404.
   */
  fallback?: http.RequestListener;
}

/** True for 127.0.0.0/8, ::1 and IPv4-mapped loopback (`::ffff:127.0.0.1`, what a dual-stack socket reports). */
export function isLoopbackAddress(address: string | undefined): boolean {
  if (!address) return false;
  const v4 = address.toLowerCase().startsWith('::ffff:') ? address.slice(7) : address;
  if (isIPv4(v4)) return v4.startsWith('127.');
  return address === '::1' || address === '0:0:0:0:0:0:0:1';
}

/** The daemon's self-monitoring HTTP server (`--monitoringAddr`, default `:15014`): `GET /metrics`. */
@injectable()
export class MonitoringServer {
  private readonly server: http.Server;

  constructor(@inject(MonitoringServerOptionsToken) private readonly options: MonitoringServerOptions) {
    this.server = http.createServer((req, res) => void this.handle(req, res));
  }

  start(): Promise<ListenAddress> {
    return listenOn(this.server, this.options.address, 'monitoring server');
  }

  /** Stops accepting connections and drops idle keep-alive ones so shutdown does not wait for scrapers. */
  stop(): Promise<void> {
    return stopHttpServer(this.server);
  }

  private async handle(req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
    // Split by hand: new URL() would read `//x/metrics` as host x, and throws on odd absolute forms.
    const path = (req.url ?? '/').split('?')[0];
    if (path !== '/metrics') {
      if (this.options.fallback) return void this.options.fallback(req, res);
      return send(res, 404, '404 page not found\n');
    }
    if (req.method !== 'GET' && req.method !== 'HEAD') {
      res.setHeader('Allow', 'GET, HEAD');
      return send(res, 405, 'method not allowed\n');
    }
    if (this.options.localhostOnly && !isLoopbackAddress(req.socket.remoteAddress)) {
      return send(res, 403, 'metrics are only available from localhost (METRICS_LOCALHOST_ACCESS_ONLY=true)\n');
    }
    try {
      const body = await this.options.metrics.metrics();
      send(res, 200, body, this.options.metrics.contentType);
    } catch (err) {
      send(res, 500, `collecting metrics failed: ${(err as Error).message}\n`);
    }
  }
}

function send(res: http.ServerResponse, status: number, body: string, contentType = 'text/plain; charset=utf-8'): void {
  res.writeHead(status, { 'Content-Type': contentType, 'Content-Length': Buffer.byteLength(body) });
  res.end(body);
}
