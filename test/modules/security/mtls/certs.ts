/** A test mesh CA and SPIFFE workload certificates, made with @peculiar/x509, as PEM files. */
import 'reflect-metadata';
import * as x509 from '@peculiar/x509';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { webcrypto } from 'node:crypto';

x509.cryptoProvider.set(webcrypto as unknown as Parameters<typeof x509.cryptoProvider.set>[0]);

/** The key types @peculiar/x509 declares (the DOM's WebCrypto types, which this project's lib leaves out). */
type KeyPair = Parameters<typeof x509.X509CertificateGenerator.createSelfSigned>[0]['keys'];
type Key = KeyPair['privateKey'];

const ALG = { name: 'ECDSA', namedCurve: 'P-256', hash: 'SHA-256' } as const;

export interface TestCa {
  cert: x509.X509Certificate;
  keys: KeyPair;
  /** PEM of the root certificate. */
  pem: string;
}

export interface WorkloadFiles {
  certificateFile: string;
  privateKeyFile: string;
}

async function pkcs8Pem(key: Key): Promise<string> {
  const der = Buffer.from(await webcrypto.subtle.exportKey('pkcs8', key as webcrypto.CryptoKey));
  return `-----BEGIN PRIVATE KEY-----\n${der.toString('base64').replace(/(.{64})/g, '$1\n').replace(/\n$/, '')}\n-----END PRIVATE KEY-----\n`;
}

function validity(): { notBefore: Date; notAfter: Date } {
  const now = Date.now();
  return { notBefore: new Date(now - 60_000), notAfter: new Date(now + 24 * 3600_000) };
}

export async function createCa(name = 'mesh test root'): Promise<TestCa> {
  const keys = (await webcrypto.subtle.generateKey(ALG, true, ['sign', 'verify'])) as unknown as KeyPair;
  const cert = await x509.X509CertificateGenerator.createSelfSigned({
    name: `CN=${name}, O=mesh`,
    keys,
    signingAlgorithm: ALG,
    ...validity(),
    extensions: [
      new x509.BasicConstraintsExtension(true, undefined, true),
      new x509.KeyUsagesExtension(x509.KeyUsageFlags.keyCertSign | x509.KeyUsageFlags.cRLSign, true),
      await x509.SubjectKeyIdentifierExtension.create(keys.publicKey),
    ],
  });
  return { cert, keys, pem: cert.toString('pem') };
}

/** A workload certificate whose only name is the URI SAN `spiffeId`, signed by `ca`, written to `dir/<name>.{crt,key}`. */
export async function writeWorkloadCert(ca: TestCa, spiffeId: string, dir: string, name: string): Promise<WorkloadFiles> {
  const keys = (await webcrypto.subtle.generateKey(ALG, true, ['sign', 'verify'])) as unknown as KeyPair;
  const cert = await x509.X509CertificateGenerator.create({
    subject: 'O=mesh',
    issuer: ca.cert.subject,
    publicKey: keys.publicKey,
    signingKey: ca.keys.privateKey,
    signingAlgorithm: ALG,
    ...validity(),
    extensions: [
      new x509.BasicConstraintsExtension(false, undefined, true),
      new x509.KeyUsagesExtension(x509.KeyUsageFlags.digitalSignature | x509.KeyUsageFlags.keyEncipherment, true),
      new x509.ExtendedKeyUsageExtension([x509.ExtendedKeyUsage.serverAuth, x509.ExtendedKeyUsage.clientAuth]),
      new x509.SubjectAlternativeNameExtension([{ type: 'url', value: spiffeId }], true),
      await x509.AuthorityKeyIdentifierExtension.create(ca.keys.publicKey),
    ],
  });
  const certificateFile = path.join(dir, `${name}.crt`);
  const privateKeyFile = path.join(dir, `${name}.key`);
  fs.writeFileSync(certificateFile, cert.toString('pem'));
  fs.writeFileSync(privateKeyFile, await pkcs8Pem(keys.privateKey), { mode: 0o600 });
  return { certificateFile, privateKeyFile };
}
