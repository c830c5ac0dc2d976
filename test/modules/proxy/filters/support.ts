import * as http from 'node:http';
import type { AddressInfo } from 'node:net';
import { exportJWK, generateKeyPair, JWK, JWTPayload, KeyLike, SignJWT } from 'jose';
import type { ConnectionInfo, FilterContext, FilterOutcome, HttpFilter, ProxyHttpRequest } from '../../../../src/modules/proxy/http/filter-api';
import { decodeMessage, encodeMessage } from '../../../../src/modules/envoy/protos';

/** A filter config exactly as the proxy receives it: encoded, then decoded. */
export function decoded(typeUrl: string, config: object): Record<string, unknown> {
  return decodeMessage(typeUrl, encodeMessage(typeUrl, config));
}

/** A FilterContext with a clock tests move and the log lines kept. */
export class TestContext implements FilterContext {
  readonly logs: string[] = [];

  constructor(public nowMs = Date.UTC(2030, 0, 1)) {}

  now(): number {
    return this.nowMs;
  }

  get nowSeconds(): number {
    return Math.floor(this.nowMs / 1000);
  }

  advanceSeconds(seconds: number): void {
    this.nowMs += seconds * 1000;
  }

  log(level: string, message: string): void {
    this.logs.push(`${level}: ${message}`);
  }
}

export const DEFAULT_CONNECTION: ConnectionInfo = {
  remoteAddress: '10.1.2.3',
  remotePort: 40000,
  localAddress: '10.0.0.5',
  localPort: 8080,
};

export interface RequestSpec {
  method?: string;
  path?: string;
  headers?: Record<string, string>;
  connection?: Partial<ConnectionInfo>;
  metadata?: Record<string, Record<string, unknown>>;
}

/** An inbound request as the HCM hands it to filters. */
export function request(spec: RequestSpec = {}): ProxyHttpRequest {
  const method = spec.method ?? 'GET';
  const path = spec.path ?? '/';
  return {
    method,
    path,
    headers: { ':method': method, ':path': path, ':authority': 'example.com', ':scheme': 'http', ...spec.headers },
    connection: { ...DEFAULT_CONNECTION, ...spec.connection },
    metadata: spec.metadata ?? {},
  };
}

export type Respond = Extract<FilterOutcome, { kind: 'respond' }>;

/** Runs one request through filters in order, as the HCM does; stops at the first local reply. */
export async function run(filters: HttpFilter[], req: ProxyHttpRequest): Promise<FilterOutcome> {
  for (const filter of filters) {
    const outcome = await filter.onRequest(req);
    if (outcome.kind === 'respond') return outcome;
  }
  return { kind: 'continue' };
}

// ---- keys and tokens ----

export interface SigningKey {
  readonly alg: string;
  readonly kid: string;
  readonly privateKey: KeyLike;
  /** The public JWK as a key set publishes it. */
  readonly jwk: JWK;
}

export async function signingKey(alg: string, kid: string, options: { crv?: string } = {}): Promise<SigningKey> {
  const { privateKey, publicKey } = await generateKeyPair(alg, { crv: options.crv });
  return { alg, kid, privateKey, jwk: { ...(await exportJWK(publicKey)), kid, alg, use: 'sig' } };
}

export function jwks(...keys: SigningKey[]): string {
  return JSON.stringify({ keys: keys.map((k) => k.jwk) });
}

/** A token signed with `key`; `header` can override the protected header (kid, alg). */
export function sign(key: SigningKey, claims: JWTPayload, header: Record<string, unknown> = {}): Promise<string> {
  return new SignJWT(claims).setProtectedHeader({ alg: key.alg, kid: key.kid, typ: 'JWT', ...header }).sign(key.privateKey);
}

// ---- a real JWKS endpoint ----

/** An HTTP server publishing a key set at `/jwks`, counting fetches; its answer can be changed. */
export class JwksServer {
  body = '{"keys":[]}';
  status = 200;
  delayMs = 0;
  fetches = 0;
  private server?: http.Server;
  private readonly pending = new Set<NodeJS.Timeout>();

  async start(): Promise<this> {
    this.server = http.createServer((req, res) => {
      this.fetches += 1;
      const timer = setTimeout(() => {
        this.pending.delete(timer);
        res.writeHead(this.status, { 'content-type': 'application/json' });
        res.end(this.body);
      }, this.delayMs);
      this.pending.add(timer);
    });
    await new Promise<void>((resolve) => this.server!.listen(0, '127.0.0.1', resolve));
    return this;
  }

  get url(): string {
    return `http://127.0.0.1:${(this.server!.address() as AddressInfo).port}/jwks`;
  }

  async stop(): Promise<void> {
    if (!this.server) return;
    for (const timer of this.pending) clearTimeout(timer);
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server!.close(() => resolve()));
  }
}

/** A URL where nothing listens (the port was just released). */
export async function unreachableUrl(): Promise<string> {
  const server = http.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return `http://127.0.0.1:${port}/jwks`;
}
