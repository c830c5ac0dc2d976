/**
 * The self-signed root, made like the incumbent's: subject O=<trust domain>, a CA that may
 * sign certificates and CRLs, an RSA key of CA_SELF_SIGNED_CA_RSA_KEY_SIZE bits, valid for
 * CA_SELF_SIGNED_CA_CERT_TTL from now.
 */
import { Certificate } from './certificate';
import { asX509KeyPair, generateKeyPair, KeyPair, signingAlgorithmOf } from './keys';
import { randomSerialNumber } from './serial-number';
import { x509Library } from './x509';

export interface SelfSignedRootSpec {
  trustDomain: string;
  rsaKeySize: number;
  ttlMs: number;
  /** Milliseconds since the epoch; the root is valid from then. */
  now: number;
  /** Re-certify this key (rotation) instead of making a new one. */
  key?: KeyPair;
}

export interface SelfSignedRoot {
  readonly key: KeyPair;
  readonly cert: Certificate;
}

export async function createSelfSignedRoot(spec: SelfSignedRootSpec): Promise<SelfSignedRoot> {
  const key = spec.key ?? (await generateKeyPair({ kind: 'rsa', bits: spec.rsaKeySize }));
  const generated = await x509Library().X509CertificateGenerator.createSelfSigned({
    serialNumber: randomSerialNumber(),
    name: [{ O: [spec.trustDomain] }],
    keys: asX509KeyPair(key),
    notBefore: new Date(spec.now),
    notAfter: new Date(spec.now + spec.ttlMs),
    signingAlgorithm: signingAlgorithmOf(key.privateKey),
    extensions: [
      new (x509Library().BasicConstraintsExtension)(true, undefined, true),
      new (x509Library().KeyUsagesExtension)(x509Library().KeyUsageFlags.keyCertSign | x509Library().KeyUsageFlags.cRLSign, true),
      await x509Library().SubjectKeyIdentifierExtension.create(asX509KeyPair(key).publicKey),
    ],
  });
  return { key, cert: Certificate.fromDer(Buffer.from(generated.rawData), 'the new self-signed root') };
}
