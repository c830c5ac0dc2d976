/**
 * The daemon's HTTPS address (`--httpsAddr`), with the daemon's certificate (replaced in place
 * when it is renewed): `/ready`, and the handlers contributed to HttpsHandler (the injection
 * and validation webhooks the orchestrator's API server calls).
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import * as https from 'node:https';
import * as tls from 'node:tls';
import { inject, injectable, named } from 'inversify';
import { Logging, LoggingToken, ScopedLogger } from '../logging';
import { ListenAddress, listenOn } from '../monitoring/listen-address';
import { stopHttpServer } from '../monitoring/http-lifecycle';
import { ContributionProvider } from '../plugins';
import { ServerKeyMaterial } from '../security/tls/server-credentials';
import { HttpsHandler, HttpsRoutes, httpsRoutes, routeHttps } from '../webhook';
import { DaemonTlsFlags, DaemonTlsFlagsToken } from './daemon-flags';
import { DaemonReadiness } from './readiness';

@injectable()
export class DaemonHttpsServer {
  private server: https.Server | undefined;
  private started: HttpsHandler[] = [];
  private readonly ciphers: string | undefined;
  private readonly log: ScopedLogger;

  constructor(
    @inject(DaemonReadiness) private readonly readiness: DaemonReadiness,
    @inject(DaemonTlsFlagsToken) tlsFlags: DaemonTlsFlags,
    @inject(ContributionProvider) @named(HttpsHandler) private readonly handlers: ContributionProvider<HttpsHandler>,
    @inject(LoggingToken) logging: Logging,
  ) {
    this.ciphers = tlsFlags.ciphers.ciphers;
    this.log = logging.scope('default');
  }

  /** Serves with `material` (the daemon's certificate, which exists only once security has started). */
  async start(address: ListenAddress, material: ServerKeyMaterial): Promise<ListenAddress> {
    const routes = httpsRoutes(this.handlers.getContributions());
    this.log.info(`HTTPS paths: /ready ${routes.flatMap((r) => r.paths).join(' ')}`.trim());
    for (const { handler } of routes) await handler.start?.();
    this.started = routes.map((r) => r.handler);
    this.server = https.createServer({ key: material.keyPem, cert: material.certChainPem, ...this.cipherOption() }, (req, res) => this.serve(routes, req, res));
    return listenOn(this.server, address, 'HTTPS');
  }

  update(material: ServerKeyMaterial): void {
    this.server?.setSecureContext({ key: material.keyPem, cert: material.certChainPem, ...this.cipherOption() } as tls.SecureContextOptions);
  }

  stop(): Promise<void> {
    for (const handler of this.started.splice(0)) handler.stop?.();
    return this.server ? stopHttpServer(this.server) : Promise.resolve();
  }

  private serve(routes: HttpsRoutes, req: IncomingMessage, res: ServerResponse): void {
    const path = (req.url ?? '/').split('?')[0];
    if (path === '/ready') {
      if (this.readiness.isReady) res.writeHead(200, { 'content-type': 'text/plain' }).end('ready\n');
      else res.writeHead(503, { 'content-type': 'text/plain' }).end('not ready\n');
      return;
    }
    const handler = routeHttps(routes, path);
    if (!handler) {
      res.writeHead(404, { 'content-type': 'text/plain' }).end(`no handler for ${path} on the HTTPS address\n`);
      return;
    }
    // A handler that throws, even before its promise exists, costs one 500, never the server.
    Promise.resolve()
      .then(() => handler.handle(req, res, path))
      .catch((err: Error) => {
        this.log.error(`HTTPS ${path}: ${err.stack ?? err.message}`);
        if (!res.headersSent) res.writeHead(500, { 'content-type': 'text/plain' }).end(`internal error: ${err.message}\n`);
        else res.destroy();
      });
  }

  private cipherOption(): { ciphers?: string } {
    return this.ciphers ? { ciphers: this.ciphers } : {};
  }
}
