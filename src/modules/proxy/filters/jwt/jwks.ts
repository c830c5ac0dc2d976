import { createPublicKey, createSecretKey, JsonWebKey, KeyObject } from 'node:crypto';
import { joseLibrary } from '../../../shared/jose-library';
import { JwtStatus, Status } from './status';
import type { ParsedJwt } from './token';

/** One usable key of a key set. */
interface Jwk {
  readonly kty: 'RSA' | 'EC' | 'oct' | 'OKP';
  readonly kid: string;
  readonly alg: string;
  readonly key: KeyObject;
}

const ED25519_SIGNATURE_BYTES = 64;

/** Which JWT algorithms a key type can verify. */
function familyAccepts(kty: Jwk['kty'], alg: string): boolean {
  switch (kty) {
    case 'RSA':
      return alg.startsWith('RS') || alg.startsWith('PS');
    case 'EC':
      return alg.startsWith('ES');
    case 'oct':
      return alg.startsWith('HS');
    default:
      return alg === 'EdDSA';
  }
}

function keyAlgAllowed(kty: string, alg: string): boolean {
  if (alg === '') return true;
  return familyAccepts(kty as Jwk['kty'], alg);
}

/** A JWK entry → usable key, or undefined when Envoy would reject it (wrong type, bad fields). */
function importJwk(entry: unknown): Jwk | undefined {
  if (typeof entry !== 'object' || entry === null || Array.isArray(entry)) return undefined;
  const jwk = entry as Record<string, unknown>;
  const { kty } = jwk;
  if (kty !== 'RSA' && kty !== 'EC' && kty !== 'oct' && kty !== 'OKP') return undefined;
  if ((jwk.kid !== undefined && typeof jwk.kid !== 'string') || (jwk.alg !== undefined && typeof jwk.alg !== 'string')) return undefined;
  const kid = (jwk.kid as string | undefined) ?? '';
  const alg = (jwk.alg as string | undefined) ?? '';
  if (!keyAlgAllowed(kty, alg)) return undefined;
  if (kty === 'OKP' && jwk.crv !== 'Ed25519') return undefined;
  try {
    const key =
      kty === 'oct'
        ? createSecretKey(Buffer.from(String(jwk.k ?? ''), 'base64url'))
        : createPublicKey({ key: publicPart(jwk), format: 'jwk' });
    return { kty, kid, alg, key };
  } catch {
    return undefined;
  }
}

/** Only the public members, so a JWKS that (wrongly) publishes a private key still yields its public key. */
function publicPart(jwk: Record<string, unknown>): JsonWebKey {
  const { kty, n, e, crv, x, y } = jwk;
  return Object.fromEntries(Object.entries({ kty, n, e, crv, x, y }).filter(([, v]) => v !== undefined)) as JsonWebKey;
}

/** A parsed JSON Web Key Set, verifying signatures with jose under Envoy's key-selection rules. */
/** Tokens remembered per key set as verified (oldest forgotten first). */
const VERIFIED_CACHE_SIZE = 1024;

export class Jwks {
  private readonly verified = new Set<string>();

  private constructor(private readonly keys: readonly Jwk[]) {}

  get size(): number {
    return this.keys.length;
  }

  /** Parses a JWKS document; a status when it is unusable (Envoy's JWKS errors). */
  static parse(text: string): Jwks | JwtStatus {
    let document: unknown;
    try {
      document = JSON.parse(text);
    } catch {
      return Status.JwksParseError;
    }
    if (typeof document !== 'object' || document === null || Array.isArray(document)) return Status.JwksParseError;
    const keys = (document as Record<string, unknown>).keys;
    if (keys === undefined) return Status.JwksNoKeys;
    if (!Array.isArray(keys)) return Status.JwksBadKeys;
    const usable = keys.map(importJwk).filter((k): k is Jwk => k !== undefined);
    return usable.length === 0 ? Status.JwksNoValidKeys : new Jwks(usable);
  }

  /**
   * Envoy's `verifyJwtWithoutTimeChecking`: keys whose `kid` (when both have one) and `alg`
   * (when the key has one) agree with the token are tried in order; none agreeing is a
   * kid/alg mismatch, none verifying a verification failure.
   */
  async verify(jwt: ParsedJwt): Promise<JwtStatus> {
    // A key set never changes once built (a rotation builds a new one), so a token whose
    // signature verified once verifies again: skip the public-key operation, as Envoy's JWT
    // cache does. Time claims are checked by the caller on every request regardless.
    if (this.verified.has(jwt.token)) return Status.Ok;
    const status = await this.verifySignature(jwt);
    if (status === Status.Ok) {
      if (this.verified.size >= VERIFIED_CACHE_SIZE) this.verified.delete(this.verified.values().next().value as string);
      this.verified.add(jwt.token);
    }
    return status;
  }

  private async verifySignature(jwt: ParsedJwt): Promise<JwtStatus> {
    const [protectedHeader, payload, signature] = jwt.token.split('.').filter((p) => p !== '');
    let kidAlgMatched = false;
    for (const jwk of this.keys) {
      if (jwt.kid !== '' && jwk.kid !== '' && jwk.kid !== jwt.kid) continue;
      if (jwk.alg !== '' && jwk.alg !== jwt.alg) continue;
      kidAlgMatched = true;
      if (jwk.kty === 'OKP' && jwt.signature.length !== ED25519_SIGNATURE_BYTES) return Status.JwtEd25519SignatureWrongLength;
      if (!familyAccepts(jwk.kty, jwt.alg)) continue;
      try {
        await joseLibrary().flattenedVerify({ protected: protectedHeader, payload, signature }, jwk.key, { algorithms: [jwt.alg] });
        return Status.Ok;
      } catch {
        // A wrong signature, or a key of the right type but another curve or size: try the next key.
      }
    }
    return kidAlgMatched ? Status.JwtVerificationFail : Status.JwksKidAlgMismatch;
  }
}
