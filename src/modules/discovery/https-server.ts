/**
 * The daemon's HTTPS address (`--httpsAddr`), with the daemon's certificate (replaced in place
 * when it is renewed). It answers `/ready`; the injection and validation webhooks that belong
 * on this address answer 404 with a note until they are built.
 */
import * as https from 'node:https';
import * as tls from 'node:tls';
import { inject, injectable } from 'inversify';
import { ListenAddress, listenOn } from '../monitoring/listen-address';
import { stopHttpServer } from '../monitoring/http-lifecycle';
import { ServerKeyMaterial } from '../security/tls/server-credentials';
import { DaemonTlsFlags, DaemonTlsFlagsToken } from './daemon-flags';
import { DaemonReadiness } from './readiness';

@injectable()
export class DaemonHttpsServer {
  private server: https.Server | undefined;
  private readonly ciphers: string | undefined;

  constructor(
    @inject(DaemonReadiness) private readonly readiness: DaemonReadiness,
    @inject(DaemonTlsFlagsToken) tlsFlags: DaemonTlsFlags,
  ) {
    this.ciphers = tlsFlags.ciphers.ciphers;
  }

  /** Serves with `material` (the daemon's certificate, which exists only once security has started). */
  start(address: ListenAddress, material: ServerKeyMaterial): Promise<ListenAddress> {
    const ciphers = this.ciphers;
    this.server = https.createServer({ key: material.keyPem, cert: material.certChainPem, ...(ciphers ? { ciphers } : {}) }, (req, res) => {
      const path = (req.url ?? '/').split('?')[0];
      if (path === '/ready') {
        if (this.readiness.isReady) res.writeHead(200, { 'content-type': 'text/plain' }).end('ready\n');
        else res.writeHead(503, { 'content-type': 'text/plain' }).end('not ready\n');
        return;
      }
      res.writeHead(404, { 'content-type': 'text/plain' }).end(`no handler for ${path} on the HTTPS address (webhooks are not served by this build)\n`);
    });
    return listenOn(this.server, address, 'HTTPS');
  }

  update(material: ServerKeyMaterial): void {
    this.server?.setSecureContext({ key: material.keyPem, cert: material.certChainPem, ...(this.ciphers ? { ciphers: this.ciphers } : {}) } as tls.SecureContextOptions);
  }

  stop(): Promise<void> {
    return this.server ? stopHttpServer(this.server) : Promise.resolve();
  }
}
