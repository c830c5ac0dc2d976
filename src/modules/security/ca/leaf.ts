/**
 * Workload (leaf) certificates: the subject is empty and the identities are the only names,
 * in a critical subject-alternative-name extension (RFC 5280 §4.2.1.6 for empty subjects),
 * as the incumbent issues them. Usable for TLS on both ends; never a CA.
 */
import { isIP } from 'node:net';
import { Certificate } from './certificate';
import { SignError } from './errors';
import { asX509Key, signingAlgorithmOf } from './keys';
import { randomSerialNumber } from './serial-number';
import { SigningChain } from './signing-chain';
import type * as x509 from '@peculiar/x509';
import { x509Library } from './x509';

export interface LeafSpec {
  readonly publicKey: x509.PublicKey;
  /** URIs (`spiffe://...`), DNS names or IP addresses: the certificate's only names. */
  readonly identities: readonly string[];
  readonly notBefore: Date;
  readonly notAfter: Date;
}

const DNS_NAME = /^(\*\.)?([a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?\.)*[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?\.?$/i;

export async function issueLeaf(signing: SigningChain, spec: LeafSpec): Promise<Certificate> {
  const issuer = signing.signingCert;
  const extensions: x509.Extension[] = [
    new (x509Library().BasicConstraintsExtension)(false, undefined, true),
    new (x509Library().KeyUsagesExtension)(x509Library().KeyUsageFlags.digitalSignature | x509Library().KeyUsageFlags.keyEncipherment, true),
    new (x509Library().ExtendedKeyUsageExtension)([x509Library().ExtendedKeyUsage.serverAuth, x509Library().ExtendedKeyUsage.clientAuth]),
    new (x509Library().SubjectAlternativeNameExtension)(subjectAltNamesOf(spec.identities), true),
  ];
  // The authority key id must repeat the issuer's subject key id byte for byte (verifiers
  // compare them); an issuer without one gets none rather than a guessed one.
  const issuerKeyId = issuer.x509.getExtension(x509Library().SubjectKeyIdentifierExtension)?.keyId;
  if (issuerKeyId) extensions.push(new (x509Library().AuthorityKeyIdentifierExtension)(issuerKeyId));
  let generated: x509.X509Certificate;
  try {
    generated = await x509Library().X509CertificateGenerator.create({
      serialNumber: randomSerialNumber(),
      subject: '',
      issuer: issuer.x509.subjectName,
      notBefore: spec.notBefore,
      notAfter: spec.notAfter,
      publicKey: spec.publicKey,
      signingKey: asX509Key(signing.key.privateKey),
      signingAlgorithm: signingAlgorithmOf(signing.key.privateKey),
      extensions,
    });
  } catch (err) {
    throw new SignError(`signing the certificate failed: ${(err as Error).message}`);
  }
  return Certificate.fromDer(Buffer.from(generated.rawData), 'the issued certificate');
}

/**
 * The alternative names for `identities`: URIs (anything with a scheme), IP addresses and
 * DNS names.
 * @throws SignError for an empty list or an identity that is none of these.
 */
export function subjectAltNamesOf(identities: readonly string[]): x509.JsonGeneralName[] {
  if (identities.length === 0) throw new SignError('no identity to put in the certificate');
  return identities.map((identity) => {
    if (identity.includes('://')) {
      if (!URL.canParse(identity)) throw new SignError(`identity "${identity}" is not a valid URI`);
      return { type: 'url', value: identity };
    }
    if (isIP(identity)) return { type: 'ip', value: identity };
    if (DNS_NAME.test(identity)) return { type: 'dns', value: identity };
    throw new SignError(`identity "${identity}" is neither a URI, an IP address nor a DNS name`);
  });
}
