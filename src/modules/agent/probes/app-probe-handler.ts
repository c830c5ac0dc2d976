/**
 * The status port's `/app-health/...` paths: each runs the application probe configured for it
 * in MESH_ORCH_APP_PROBERS and answers with the outcome's status (the body says why).
 */
import * as http from 'node:http';
import { AppProber, AppProbers } from './app-probers';
import { probeGrpc } from './grpc-probe';
import { probeHttp } from './http-probe';
import { ProbeOutcome } from './outcome';
import { probeTcp } from './tcp-probe';

export const APP_HEALTH_PREFIX = '/app-health/';

export interface AppProbeHandlerOptions {
  /** Where the application listens when a probe names no host; default 127.0.0.1. */
  appHost?: string;
  /** Called with each failed probe. */
  onFailure?: (path: string, outcome: ProbeOutcome) => void;
}

export class AppProbeHandler {
  private readonly appHost: string;

  constructor(
    private readonly probers: AppProbers,
    private readonly options: AppProbeHandlerOptions = {},
  ) {
    this.appHost = options.appHost ?? '127.0.0.1';
  }

  /** Whether `path` is for this handler: every `/app-health/` path is, configured or not. */
  handles(path: string): boolean {
    return path.startsWith(APP_HEALTH_PREFIX);
  }

  async handle(path: string, req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
    const prober = this.probers.get(path);
    if (!prober) {
      // As the incumbent: a path under /app-health/ with no probe is a bad request.
      const known = [...this.probers.keys()];
      res.writeHead(400, { 'content-type': 'text/plain' }).end(`no application probe is configured for ${path}${known.length ? `; configured: ${known.join(', ')}` : ' (MESH_ORCH_APP_PROBERS is empty)'}\n`);
      return;
    }
    const outcome = await this.run(prober, req);
    if (outcome.status >= 400) this.options.onFailure?.(path, outcome);
    res.writeHead(outcome.status, { 'content-type': 'text/plain' }).end(`${outcome.detail}\n`);
  }

  run(prober: AppProber, req: http.IncomingMessage): Promise<ProbeOutcome> {
    const timeoutMs = prober.timeoutSeconds * 1000;
    switch (prober.kind) {
      case 'httpGet':
        return probeHttp(prober.httpGet, { host: this.appHost, timeoutMs, incomingHeaders: req.headers });
      case 'tcpSocket':
        return probeTcp(prober.tcpSocket.host ?? this.appHost, prober.tcpSocket.port, timeoutMs);
      case 'grpc':
        return probeGrpc(prober.grpc, this.appHost, timeoutMs, req.headers['user-agent']);
    }
  }
}
