/** A real key-set server for request-authentication tests: keys made with jose, served over HTTP(S) on 127.0.0.1. */
import * as fs from 'node:fs';
import * as http from 'node:http';
import * as https from 'node:https';
import { AddressInfo } from 'node:net';
import * as path from 'node:path';
import { exportJWK, generateKeyPair, JWK, KeyLike, SignJWT } from 'jose';
import { REPO_ROOT } from '../../helpers/run-cli';

export interface SigningKey {
  kid: string;
  privateKey: KeyLike;
  /** The public key as a JWK, with kid, alg and use. */
  jwk: JWK;
}

export async function newSigningKey(kid: string, alg = 'RS256'): Promise<SigningKey> {
  const { privateKey, publicKey } = await generateKeyPair(alg);
  return { kid, privateKey, jwk: { ...(await exportJWK(publicKey)), kid, alg, use: 'sig' } };
}

/** The public keys as a JWKS document. */
export function jwksOf(...keys: SigningKey[]): string {
  return JSON.stringify({ keys: keys.map((k) => k.jwk) });
}

export async function signToken(key: SigningKey, claims: Record<string, unknown>): Promise<string> {
  return new SignJWT(claims)
    .setProtectedHeader({ alg: key.jwk.alg!, kid: key.kid })
    .setIssuedAt()
    .setExpirationTime('1h')
    .sign(key.privateKey);
}

/** The self-signed certificate of test/fixtures/authn (127.0.0.1, localhost). */
export function selfSignedTls(): { key: Buffer; cert: Buffer } {
  const dir = path.join(REPO_ROOT, 'test', 'fixtures', 'authn');
  return { key: fs.readFileSync(path.join(dir, 'self-signed-key.pem')), cert: fs.readFileSync(path.join(dir, 'self-signed-cert.pem')) };
}

/**
 * Serves `body` (with `status`) at every path except `/.well-known/openid-configuration`, which
 * names `/jwks.json` as the key set. Tests change `body`, `status` and `delayMs` as they go.
 */
export class JwksServer {
  body: string;
  status = 200;
  /** Answers wait this long (a slow key server). */
  delayMs = 0;
  /** Requests for key sets seen so far. */
  hits = 0;
  /**
   * While set, every connection is cut as it opens: the key server is down, yet its port stays
   * taken, so it can come back on the same URL (a released port may be handed to another
   * listener, the daemon's own included, before it does).
   */
  down = false;

  private constructor(
    private readonly server: http.Server,
    readonly secure: boolean,
    body: string,
  ) {
    this.body = body;
  }

  /** Listens on `port` of 127.0.0.1 (default: one the system picks). */
  static async start(body: string, tls?: { key: Buffer; cert: Buffer }, port = 0): Promise<JwksServer> {
    let self: JwksServer | undefined;
    const handler = (req: http.IncomingMessage, res: http.ServerResponse) => self!.answer(req, res);
    const server = tls ? https.createServer(tls, handler) : http.createServer(handler);
    self = new JwksServer(server, tls !== undefined, body);
    server.on('connection', (socket) => {
      if (self!.down) socket.destroy();
    });
    await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve));
    return self;
  }

  get port(): number {
    return (this.server.address() as AddressInfo).port;
  }

  url(pathname = '/jwks.json'): string {
    return `${this.secure ? 'https' : 'http'}://127.0.0.1:${this.port}${pathname}`;
  }

  async stop(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  private answer(req: http.IncomingMessage, res: http.ServerResponse): void {
    const send = () => {
      if (req.url === '/.well-known/openid-configuration') {
        res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ issuer: this.url(''), jwks_uri: this.url('/jwks.json') }));
        return;
      }
      this.hits += 1;
      res.writeHead(this.status, { 'content-type': 'application/json' }).end(this.body);
    };
    if (this.delayMs > 0) setTimeout(send, this.delayMs);
    else send();
  }
}

/** A port on 127.0.0.1 nothing listens on (bound, then released). */
export async function closedPort(): Promise<number> {
  const server = http.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}
