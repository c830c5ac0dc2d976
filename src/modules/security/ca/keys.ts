/**
 * Key material of the CA: generation, PEM in and out, and the signature algorithm each key
 * signs with. Keys live as WebCrypto keys (what @peculiar/x509 signs with); PEM is PKCS#8,
 * and PKCS#1 / SEC1 PEM (`RSA PRIVATE KEY`, `EC PRIVATE KEY`) is accepted on input, as the
 * incumbent's plugged-in key files often are.
 */
import { createPrivateKey, createPublicKey, KeyObject, webcrypto } from 'node:crypto';
import { X509CryptoKey, X509KeyPair, X509SigningAlgorithm } from './x509';

type CryptoKey = webcrypto.CryptoKey;

export type EcCurve = 'P-256' | 'P-384' | 'P-521';

export type KeySpec = { kind: 'rsa'; bits: number } | { kind: 'ec'; curve: EcCurve };

export interface KeyPair {
  readonly privateKey: CryptoKey;
  readonly publicKey: CryptoKey;
}

const RSA_ALGORITHM = { name: 'RSASSA-PKCS1-v1_5', hash: 'SHA-256' } as const;
const PUBLIC_EXPONENT = new Uint8Array([1, 0, 1]);
const HASH_OF_CURVE: Record<EcCurve, string> = { 'P-256': 'SHA-256', 'P-384': 'SHA-384', 'P-521': 'SHA-512' };
/** OpenSSL's curve names (KeyObject details) to WebCrypto's. */
const CURVE_OF_OPENSSL_NAME: Record<string, EcCurve> = { prime256v1: 'P-256', secp384r1: 'P-384', secp521r1: 'P-521' };

export async function generateKeyPair(spec: KeySpec): Promise<KeyPair> {
  const algorithm =
    spec.kind === 'rsa'
      ? { ...RSA_ALGORITHM, modulusLength: spec.bits, publicExponent: PUBLIC_EXPONENT }
      : { name: 'ECDSA', namedCurve: spec.curve };
  const pair = (await webcrypto.subtle.generateKey(algorithm, true, ['sign', 'verify'])) as webcrypto.CryptoKeyPair;
  return { privateKey: pair.privateKey, publicKey: pair.publicKey };
}

/** The private key as PKCS#8 PEM. */
export async function privateKeyToPem(key: CryptoKey): Promise<string> {
  if (key.type !== 'private') throw new Error(`expected a private key, got a ${key.type} key`);
  return derToPem(Buffer.from(await webcrypto.subtle.exportKey('pkcs8', key)), 'PRIVATE KEY');
}

/**
 * Reads a private key PEM (PKCS#8, PKCS#1 or SEC1; RSA or ECDSA P-256/384/521).
 * @param source names the key in errors (a file path, a setting).
 * @throws Error naming `source` when the PEM is not such a key.
 */
export async function keyPairFromPem(pem: string, source: string): Promise<KeyPair> {
  let keyObject: KeyObject;
  try {
    keyObject = createPrivateKey(pem);
  } catch (err) {
    throw new Error(`${source} is not a PEM private key: ${(err as Error).message}`);
  }
  const algorithm = importAlgorithmOf(keyObject, source);
  const pkcs8 = keyObject.export({ type: 'pkcs8', format: 'der' });
  const spki = createPublicKey(keyObject).export({ type: 'spki', format: 'der' });
  const privateKey = await webcrypto.subtle.importKey('pkcs8', pkcs8, algorithm, true, ['sign']);
  const publicKey = await webcrypto.subtle.importKey('spki', spki, algorithm, true, ['verify']);
  return { privateKey, publicKey };
}

function importAlgorithmOf(key: KeyObject, source: string): webcrypto.RsaHashedImportParams | webcrypto.EcKeyImportParams {
  if (key.asymmetricKeyType === 'rsa') return { ...RSA_ALGORITHM };
  if (key.asymmetricKeyType === 'ec') {
    const curveName = key.asymmetricKeyDetails?.namedCurve ?? '';
    const curve = CURVE_OF_OPENSSL_NAME[curveName];
    if (!curve) throw new Error(`${source}: EC curve ${curveName || '(unknown)'} is not supported; use P-256, P-384 or P-521`);
    return { name: 'ECDSA', namedCurve: curve };
  }
  throw new Error(`${source}: ${key.asymmetricKeyType} keys are not supported; use RSA or ECDSA`);
}

/** The node:crypto view of a WebCrypto key (for checks such as "does this key match that certificate"). */
export function keyObjectOf(key: CryptoKey): KeyObject {
  return KeyObject.from(key);
}

/** What a CA key signs with: SHA-256 with RSA, or ECDSA with the curve's hash (as Go's x509 picks). */
export function signingAlgorithmOf(key: CryptoKey): X509SigningAlgorithm {
  const algorithm = key.algorithm as webcrypto.KeyAlgorithm & { namedCurve?: string };
  if (algorithm.name === 'ECDSA') {
    const hash = HASH_OF_CURVE[algorithm.namedCurve as EcCurve] ?? 'SHA-256';
    return { name: 'ECDSA', hash } as unknown as X509SigningAlgorithm;
  }
  return { name: algorithm.name, hash: 'SHA-256' } as unknown as X509SigningAlgorithm;
}

/** The key pair in the type @peculiar/x509 declares (its DOM CryptoKeyPair). */
export function asX509KeyPair(pair: KeyPair): X509KeyPair {
  return pair as unknown as X509KeyPair;
}

export function asX509Key(key: CryptoKey): X509CryptoKey {
  return key as unknown as X509CryptoKey;
}

export function derToPem(der: Buffer, label: string): string {
  const lines = der.toString('base64').match(/.{1,64}/g) ?? [];
  return `-----BEGIN ${label}-----\n${lines.join('\n')}\n-----END ${label}-----\n`;
}
