import { JwtStatus, Status } from './status';

/** The algorithms Envoy's JWT library implements. */
export const SUPPORTED_ALGORITHMS: ReadonlySet<string> = new Set([
  'ES256', 'ES384', 'ES512', 'HS256', 'HS384', 'HS512', 'RS256', 'RS384', 'RS512', 'PS256', 'PS384', 'PS512', 'EdDSA',
]);

/** A JWT split and decoded, not yet verified. */
export interface ParsedJwt {
  /** The compact form, as extracted. */
  readonly token: string;
  readonly payloadBase64Url: string;
  readonly header: Record<string, unknown>;
  readonly payload: Record<string, unknown>;
  readonly alg: string;
  readonly kid: string;
  readonly iss: string;
  readonly sub: string;
  /** Seconds since the epoch; 0 when absent (as Envoy). */
  readonly nbf: number;
  readonly exp: number;
  readonly audiences: readonly string[];
  readonly signature: Buffer;
}

export type ParseResult = { ok: true; jwt: ParsedJwt } | { ok: false; status: JwtStatus };

const BASE64URL = /^[A-Za-z0-9_-]*={0,2}$/;

function decodeBase64Url(text: string): Buffer | undefined {
  if (!BASE64URL.test(text) || text.replace(/=+$/, '').length % 4 === 1) return undefined;
  return Buffer.from(text, 'base64url');
}

function parseJsonObject(bytes: Buffer): Record<string, unknown> | undefined {
  try {
    const value: unknown = JSON.parse(bytes.toString('utf8'));
    return typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Record<string, unknown>) : undefined;
  } catch {
    return undefined;
  }
}

type Field<T> = { ok: true; value: T } | { ok: false; status: JwtStatus };

function optionalString(object: Record<string, unknown>, key: string, wrongType: JwtStatus): Field<string> {
  const value = object[key];
  if (value === undefined) return { ok: true, value: '' };
  return typeof value === 'string' ? { ok: true, value } : { ok: false, status: wrongType };
}

function optionalSeconds(object: Record<string, unknown>, key: string, wrongType: JwtStatus, outOfRange: JwtStatus): Field<number> {
  const value = object[key];
  if (value === undefined) return { ok: true, value: 0 };
  if (typeof value !== 'number') return { ok: false, status: wrongType };
  if (value < 0 || value >= 2 ** 64) return { ok: false, status: outOfRange };
  return { ok: true, value: Math.trunc(value) };
}

function audiencesOf(payload: Record<string, unknown>): Field<string[]> {
  const aud = payload.aud;
  if (aud === undefined) return { ok: true, value: [] };
  if (typeof aud === 'string') return { ok: true, value: [aud] };
  if (Array.isArray(aud) && aud.every((a) => typeof a === 'string')) return { ok: true, value: aud as string[] };
  return { ok: false, status: Status.JwtPayloadParseErrorAudNotString };
}

/** Parses a compact JWT with the checks and statuses of Envoy's `Jwt::parseFromString`. */
export function parseJwt(token: string): ParseResult {
  const parts = token.split('.').filter((p) => p !== '');
  if (parts.length !== 3) return { ok: false, status: Status.JwtBadFormat };
  const [headerText, payloadText, signatureText] = parts;

  const headerBytes = decodeBase64Url(headerText);
  if (!headerBytes) return { ok: false, status: Status.JwtHeaderParseErrorBadBase64 };
  const header = parseJsonObject(headerBytes);
  if (!header) return { ok: false, status: Status.JwtHeaderParseErrorBadJson };
  if (typeof header.alg !== 'string') return { ok: false, status: Status.JwtHeaderBadAlg };
  if (!SUPPORTED_ALGORITHMS.has(header.alg)) return { ok: false, status: Status.JwtHeaderNotImplementedAlg };
  const kid = optionalString(header, 'kid', Status.JwtHeaderBadKid);
  if (!kid.ok) return kid;

  const payloadBytes = decodeBase64Url(payloadText);
  if (!payloadBytes) return { ok: false, status: Status.JwtPayloadParseErrorBadBase64 };
  const payload = parseJsonObject(payloadBytes);
  if (!payload) return { ok: false, status: Status.JwtPayloadParseErrorBadJson };

  const iss = optionalString(payload, 'iss', Status.JwtPayloadParseErrorIssNotString);
  if (!iss.ok) return iss;
  const sub = optionalString(payload, 'sub', Status.JwtPayloadParseErrorSubNotString);
  if (!sub.ok) return sub;
  const iat = optionalSeconds(payload, 'iat', Status.JwtPayloadParseErrorIatNotInteger, Status.JwtPayloadParseErrorIatOutOfRange);
  if (!iat.ok) return iat;
  const nbf = optionalSeconds(payload, 'nbf', Status.JwtPayloadParseErrorNbfNotInteger, Status.JwtPayloadParseErrorNbfOutOfRange);
  if (!nbf.ok) return nbf;
  const exp = optionalSeconds(payload, 'exp', Status.JwtPayloadParseErrorExpNotInteger, Status.JwtPayloadParseErrorExpOutOfRange);
  if (!exp.ok) return exp;
  const jti = optionalString(payload, 'jti', Status.JwtPayloadParseErrorJtiNotString);
  if (!jti.ok) return jti;
  const audiences = audiencesOf(payload);
  if (!audiences.ok) return audiences;

  const signature = decodeBase64Url(signatureText);
  if (!signature) return { ok: false, status: Status.JwtSignatureParseErrorBadBase64 };

  return {
    ok: true,
    jwt: {
      token,
      payloadBase64Url: payloadText,
      header,
      payload,
      alg: header.alg,
      kid: kid.value,
      iss: iss.value,
      sub: sub.value,
      nbf: nbf.value,
      exp: exp.value,
      audiences: audiences.value,
      signature,
    },
  };
}

/** Parsed tokens remembered (oldest forgotten first), and the longest token worth remembering. */
const PARSED_CACHE_SIZE = 1024;
const PARSED_CACHE_MAX_TOKEN = 16 * 1024;
const parsedTokens = new Map<string, ParsedJwt>();

/**
 * `parseJwt` remembering well-formed tokens, so a client sending the same token on every
 * request is split and decoded once. Parsing is a pure function of the token's bytes, so this
 * is safe whatever the keys, issuers or clocks: every check (time, issuer, audience, signature
 * against the current key set) still runs per request on the remembered claims. The header and
 * payload are frozen, so no request can change what the next one sees.
 */
export function parseJwtCached(token: string): ParseResult {
  const known = parsedTokens.get(token);
  if (known) return { ok: true, jwt: known };
  const parsed = parseJwt(token);
  if (parsed.ok && token.length <= PARSED_CACHE_MAX_TOKEN) {
    deepFreeze(parsed.jwt.header);
    deepFreeze(parsed.jwt.payload);
    Object.freeze(parsed.jwt.audiences);
    Object.freeze(parsed.jwt);
    if (parsedTokens.size >= PARSED_CACHE_SIZE) parsedTokens.delete(parsedTokens.keys().next().value as string);
    parsedTokens.set(token, parsed.jwt);
  }
  return parsed;
}

function deepFreeze(value: unknown): void {
  if (typeof value !== 'object' || value === null || Object.isFrozen(value)) return;
  Object.freeze(value);
  for (const v of Object.values(value)) deepFreeze(v);
}

/** Envoy's time check: `nbf` and `exp` each get `clockSkew` seconds of slack. */
export function checkTime(jwt: ParsedJwt, nowSeconds: number, clockSkewSeconds: number): JwtStatus {
  if (nowSeconds + clockSkewSeconds < jwt.nbf) return Status.JwtNotYetValid;
  if (jwt.exp !== 0 && nowSeconds > jwt.exp + clockSkewSeconds) return Status.JwtExpired;
  return Status.Ok;
}
