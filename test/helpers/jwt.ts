import * as http from 'node:http';
import type { AddressInfo } from 'node:net';
import { exportJWK, generateKeyPair, JWK, KeyLike, SignJWT } from 'jose';

export interface SigningKey {
  kid: string;
  alg: string;
  privateKey: KeyLike;
  jwk: JWK;
}

export async function signingKey(kid: string, alg: 'RS256' | 'ES256' | 'EdDSA' = 'RS256'): Promise<SigningKey> {
  const { publicKey, privateKey } = await generateKeyPair(alg, { crv: alg === 'EdDSA' ? 'Ed25519' : undefined });
  return { kid, alg, privateKey, jwk: { ...(await exportJWK(publicKey)), kid, alg, use: 'sig' } };
}

export interface TokenOptions {
  iss: string;
  sub?: string;
  aud?: string | string[];
  /** Seconds from now; negative for an expired token. */
  expiresIn?: number;
  claims?: Record<string, unknown>;
}

export function token(key: SigningKey, o: TokenOptions): Promise<string> {
  const now = Math.floor(Date.now() / 1000);
  const jwt = new SignJWT({ ...o.claims })
    .setProtectedHeader({ alg: key.alg, kid: key.kid })
    .setIssuer(o.iss)
    .setIssuedAt(now - 10)
    .setExpirationTime(now + (o.expiresIn ?? 3600));
  if (o.sub) jwt.setSubject(o.sub);
  if (o.aud) jwt.setAudience(o.aud);
  return jwt.sign(key.privateKey);
}

/** A JWKS endpoint whose key set the test can change; counts fetches. */
export interface JwksServer {
  url: string;
  port: number;
  fetches: number;
  setKeys(keys: SigningKey[]): void;
  close(): Promise<void>;
}

export async function startJwksServer(keys: SigningKey[], host = '127.0.0.1'): Promise<JwksServer> {
  let body = JSON.stringify({ keys: keys.map((k) => k.jwk) });
  const state = { fetches: 0 };
  const server = http.createServer((req, res) => {
    state.fetches++;
    res.writeHead(200, { 'content-type': 'application/json' }).end(body);
  });
  await new Promise<void>((resolve) => server.listen(0, host, resolve));
  const port = (server.address() as AddressInfo).port;
  return {
    url: `http://${host}:${port}/jwks.json`,
    port,
    get fetches() {
      return state.fetches;
    },
    setKeys(next: SigningKey[]) {
      body = JSON.stringify({ keys: next.map((k) => k.jwk) });
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** Polls `probe` until it returns `expected` or `timeoutMs` passes; resolves with the last value. */
export async function eventually<T>(probe: () => Promise<T>, expected: T, timeoutMs = 2000, everyMs = 50): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let last = await probe();
  while (last !== expected && Date.now() < deadline) {
    await new Promise((r) => setTimeout(r, everyMs));
    last = await probe();
  }
  return last;
}
