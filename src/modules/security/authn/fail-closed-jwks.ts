/**
 * The key set inlined when the daemon cannot fetch an issuer's keys, so that the provider stays
 * in place and every token of that issuer is rejected (401) instead of the check disappearing.
 *
 * The incumbent inlines a fixed RSA key whose private half is printed in its source, so anyone
 * can sign tokens it accepts. Ours is a P-256 public key nobody holds the private key of: the
 * point is derived from a hash ("nothing up my sleeve"): x = SHA-256(seed || counter) for the
 * first counter that lands on the curve, and the even y. Signing for it means solving the
 * discrete logarithm of a hash output. It is the same in every daemon, so generated config
 * does not change across restarts.
 */
import { createHash } from 'node:crypto';

export const FAIL_CLOSED_KEY_ID = 'mesh-fail-closed';
const SEED = 'mesh.io fail-closed JWKS';

// NIST P-256 (FIPS 186-4 D.1.2.3): y² = x³ - 3x + b over GF(p).
const P = 2n ** 256n - 2n ** 224n + 2n ** 192n + 2n ** 96n - 1n;
const B = 0x5ac635d8aa3a93e7b3ebbd55769886bc651d06b0cc53b0f63bce3c3e27d2604bn;

function modPow(base: bigint, exponent: bigint, modulus: bigint): bigint {
  let result = 1n;
  let b = base % modulus;
  let e = exponent;
  while (e > 0n) {
    if (e & 1n) result = (result * b) % modulus;
    b = (b * b) % modulus;
    e >>= 1n;
  }
  return result;
}

function base64url(n: bigint): string {
  return Buffer.from(n.toString(16).padStart(64, '0'), 'hex').toString('base64url');
}

/** The curve point for the first counter whose hash is an x coordinate on P-256. */
function numsPoint(): { x: bigint; y: bigint } {
  for (let counter = 0; ; counter++) {
    const x = BigInt(`0x${createHash('sha256').update(`${SEED} ${counter}`).digest('hex')}`) % P;
    const rhs = (((x * x * x - 3n * x + B) % P) + P) % P;
    // p ≡ 3 (mod 4), so a square root, when one exists, is rhs^((p+1)/4).
    const root = modPow(rhs, (P + 1n) / 4n, P);
    if ((root * root) % P !== rhs) continue;
    return { x, y: root % 2n === 0n ? root : P - root };
  }
}

function build(): string {
  const { x, y } = numsPoint();
  return JSON.stringify({ keys: [{ kty: 'EC', crv: 'P-256', x: base64url(x), y: base64url(y), alg: 'ES256', use: 'sig', kid: FAIL_CLOSED_KEY_ID }] });
}

let cached: string | undefined;

/** The fail-closed key set as a JWKS JSON string. */
export function failClosedJwks(): string {
  cached ??= build();
  return cached;
}
