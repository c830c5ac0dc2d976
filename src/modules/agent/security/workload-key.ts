import { webcrypto } from 'node:crypto';
import { x509Library } from '../../security/ca';
import { UserError } from '../../shared/user-error';

export class WorkloadKeyError extends UserError {}

/** How the agent makes its private key: RSA by default, ECDSA per ECC_SIGNATURE_ALGORITHM/ECC_CURVE. */
export type KeySpec = { kind: 'RSA'; bits: number } | { kind: 'ECDSA'; curve: 'P-256' | 'P-384' };

const CURVES: Record<string, 'P-256' | 'P-384'> = { P256: 'P-256', P384: 'P-384' };

/** Reads the key choice from the settings' values, naming the setting when a value is not supported. */
export function keySpecFrom(values: { eccSignatureAlgorithm?: string; eccCurve: string; rsaKeySize: number }): KeySpec {
  const algorithm = values.eccSignatureAlgorithm?.trim() ?? '';
  if (algorithm === '') {
    if (values.rsaKeySize < 2048) throw new WorkloadKeyError(`WORKLOAD_RSA_KEY_SIZE: ${values.rsaKeySize} bits is too small (at least 2048)`);
    return { kind: 'RSA', bits: values.rsaKeySize };
  }
  if (algorithm.toUpperCase() !== 'ECDSA') throw new WorkloadKeyError(`ECC_SIGNATURE_ALGORITHM: "${algorithm}" is not supported (use ECDSA, or leave it unset for RSA)`);
  const curve = CURVES[values.eccCurve.toUpperCase()];
  if (!curve) throw new WorkloadKeyError(`ECC_CURVE: "${values.eccCurve}" is not supported (use ${Object.keys(CURVES).join(' or ')})`);
  return { kind: 'ECDSA', curve };
}

export interface WorkloadKey {
  keyPem: string;
  keys: webcrypto.CryptoKeyPair;
  algorithm: webcrypto.RsaHashedKeyGenParams | webcrypto.EcKeyGenParams;
  signing: webcrypto.Algorithm | webcrypto.EcdsaParams;
}

export async function generateWorkloadKey(spec: KeySpec): Promise<WorkloadKey> {
  const algorithm: webcrypto.RsaHashedKeyGenParams | webcrypto.EcKeyGenParams =
    spec.kind === 'RSA'
      ? { name: 'RSASSA-PKCS1-v1_5', hash: 'SHA-256', publicExponent: new Uint8Array([1, 0, 1]), modulusLength: spec.bits }
      : { name: 'ECDSA', namedCurve: spec.curve };
  const keys = (await webcrypto.subtle.generateKey(algorithm, true, ['sign', 'verify'])) as webcrypto.CryptoKeyPair;
  const pkcs8 = Buffer.from(await webcrypto.subtle.exportKey('pkcs8', keys.privateKey));
  const keyPem = `-----BEGIN PRIVATE KEY-----\n${pkcs8.toString('base64').replace(/(.{64})/g, '$1\n').replace(/\n$/, '')}\n-----END PRIVATE KEY-----\n`;
  const signing = spec.kind === 'RSA' ? { name: 'RSASSA-PKCS1-v1_5' } : { name: 'ECDSA', hash: 'SHA-256' };
  return { keyPem, keys, algorithm, signing };
}

/** A PEM CSR for `identity` (the CA takes the identity from the credential; the SAN is informative). */
export async function certificateRequest(key: WorkloadKey, identity: string): Promise<string> {
  const csr = await x509Library().Pkcs10CertificateRequestGenerator.create({
    keys: key.keys,
    signingAlgorithm: { ...key.algorithm, ...key.signing },
    extensions: identity ? [new (x509Library().SubjectAlternativeNameExtension)([{ type: 'url', value: identity }])] : [],
  });
  return csr.toString('pem');
}
