/** Shared material for the CA tests: CSRs made like an agent makes them, CA files made like an operator does, openssl checks. */
import { execFile } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { promisify } from 'node:util';
import { Registry } from 'prom-client';
import { CertificateAuthorityOptions, generateKeyPair, KeyPair, KeySpec, privateKeyToPem } from '../../../../src/modules/security/ca';
import * as x509 from '@peculiar/x509';
import { x509Library } from '../../../../src/modules/security/ca/x509';

// Sets the library's crypto provider (Node's WebCrypto), as the CA does before its first use.
x509Library();

const run = promisify(execFile);

export interface TestCsr {
  csrPem: string;
  keyPem: string;
  key: KeyPair;
}

/** A CSR for `spec`'s new key, asking for `requestedSans` (which the CA must ignore). */
export async function makeCsr(spec: KeySpec = { kind: 'ec', curve: 'P-256' }, requestedSans: string[] = []): Promise<TestCsr> {
  const key = await generateKeyPair(spec);
  const signingAlgorithm = spec.kind === 'rsa' ? { name: 'RSASSA-PKCS1-v1_5', hash: 'SHA-256' } : { name: 'ECDSA', hash: spec.curve === 'P-384' ? 'SHA-384' : 'SHA-256' };
  const extensions = requestedSans.length > 0 ? [new x509.SubjectAlternativeNameExtension(requestedSans.map((value) => ({ type: value.includes('://') ? 'url' : 'dns', value })))] : [];
  const csr = await x509.Pkcs10CertificateRequestGenerator.create({
    name: 'O=requested-org, CN=requested-name',
    keys: key as never,
    signingAlgorithm: signingAlgorithm as never,
    extensions,
  });
  return { csrPem: csr.toString('pem'), keyPem: await privateKeyToPem(key.privateKey), key };
}

export function tempDir(prefix = 'mesh-ca-'): string {
  return fs.mkdtempSync(path.join(os.tmpdir(), prefix));
}

/**
 * `openssl verify -CAfile <roots> [-untrusted <intermediates>] <leaf>` of a chain (leaf first,
 * then intermediates; `roots` the trust anchors). Resolves with openssl's output.
 */
export async function opensslVerify(chain: string[], roots: string[]): Promise<string> {
  const dir = tempDir('mesh-ca-verify-');
  try {
    fs.writeFileSync(path.join(dir, 'leaf.pem'), chain[0]);
    fs.writeFileSync(path.join(dir, 'root.pem'), roots.join(''));
    const args = ['verify', '-CAfile', path.join(dir, 'root.pem')];
    const intermediates = chain.slice(1).filter((pem) => !roots.includes(pem));
    if (intermediates.length > 0) {
      fs.writeFileSync(path.join(dir, 'intermediates.pem'), intermediates.join(''));
      args.push('-untrusted', path.join(dir, 'intermediates.pem'));
    }
    args.push(path.join(dir, 'leaf.pem'));
    try {
      const { stdout, stderr } = await run('openssl', args);
      return `${stdout}${stderr}`.trim();
    } catch (err) {
      const e = err as { stdout?: string; stderr?: string; message: string };
      return `${e.stdout ?? ''}${e.stderr ?? e.message}`.trim();
    }
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

/** openssl's text dump of one certificate. */
export async function opensslText(pem: string): Promise<string> {
  const dir = tempDir('mesh-ca-text-');
  try {
    fs.writeFileSync(path.join(dir, 'cert.pem'), pem);
    const { stdout } = await run('openssl', ['x509', '-noout', '-text', '-in', path.join(dir, 'cert.pem')]);
    return stdout;
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

/** CA options for tests: small but real; rotation off unless a test turns it on. */
export function testCaOptions(overrides: Partial<CertificateAuthorityOptions> = {}): CertificateAuthorityOptions {
  return {
    trustDomain: 'cluster.local',
    selfSigned: { rsaKeySize: 2048, ttlMs: 10 * 365 * 24 * 3600_000 },
    workloadCertTtl: { defaultMs: 24 * 3600_000, maxMs: 90 * 24 * 3600_000 },
    rotation: { checkIntervalMs: 0, gracePeriodPercentile: 20, jitter: false },
    ...overrides,
  };
}

export interface OperatorCa {
  rootPem: string;
  intermediatePem: string;
  intermediateKeyPem: string;
  rootKeyPem: string;
}

/** A root and an intermediate CA, as an operator would make them for ROOT_CA_DIR (ECDSA P-256; the root RSA). */
export async function makeOperatorCa(options: { intermediateLifetimeMs?: number } = {}): Promise<OperatorCa> {
  const rootKey = await generateKeyPair({ kind: 'rsa', bits: 2048 });
  const now = Date.now();
  const root = await x509.X509CertificateGenerator.createSelfSigned({
    name: 'CN=Test Root CA, O=test.example',
    keys: rootKey as never,
    notBefore: new Date(now - 60_000),
    notAfter: new Date(now + 365 * 24 * 3600_000),
    signingAlgorithm: { name: 'RSASSA-PKCS1-v1_5', hash: 'SHA-256' } as never,
    extensions: [
      new x509.BasicConstraintsExtension(true, undefined, true),
      new x509.KeyUsagesExtension(x509.KeyUsageFlags.keyCertSign | x509.KeyUsageFlags.cRLSign, true),
      await x509.SubjectKeyIdentifierExtension.create(rootKey.publicKey as never),
    ],
  });
  const intermediateKey = await generateKeyPair({ kind: 'ec', curve: 'P-256' });
  const intermediate = await x509.X509CertificateGenerator.create({
    subject: 'CN=Test Intermediate CA, O=cluster.local',
    issuer: root.subjectName,
    publicKey: intermediateKey.publicKey as never,
    signingKey: rootKey.privateKey as never,
    notBefore: new Date(now - 60_000),
    notAfter: new Date(now + (options.intermediateLifetimeMs ?? 180 * 24 * 3600_000)),
    signingAlgorithm: { name: 'RSASSA-PKCS1-v1_5', hash: 'SHA-256' } as never,
    extensions: [
      new x509.BasicConstraintsExtension(true, 0, true),
      new x509.KeyUsagesExtension(x509.KeyUsageFlags.keyCertSign | x509.KeyUsageFlags.cRLSign, true),
      await x509.SubjectKeyIdentifierExtension.create(intermediateKey.publicKey as never),
      await x509.AuthorityKeyIdentifierExtension.create(rootKey.publicKey as never),
    ],
  });
  return {
    rootPem: root.toString('pem') + '\n',
    intermediatePem: intermediate.toString('pem') + '\n',
    intermediateKeyPem: await privateKeyToPem(intermediateKey.privateKey),
    rootKeyPem: await privateKeyToPem(rootKey.privateKey),
  };
}

/** Writes `files` (name → content) into a new temporary directory. */
export function writeDir(files: Record<string, string>): string {
  const dir = tempDir('mesh-ca-dir-');
  for (const [name, content] of Object.entries(files)) fs.writeFileSync(path.join(dir, name), content);
  return dir;
}

/** Every metric of `registry` whose name starts with `prefix`, as name → value (single-series metrics). */
export async function metricValues(registry: Registry, prefix = 'ca_server_'): Promise<Record<string, number>> {
  const values: Record<string, number> = {};
  for (const metric of await registry.getMetricsAsJSON()) {
    if (metric.name.startsWith(prefix)) values[metric.name] = metric.values[0]?.value ?? 0;
  }
  return values;
}

/** `after - before` per metric, only the ones that changed. */
export function changed(before: Record<string, number>, after: Record<string, number>, only: string[] = []): Record<string, number> {
  const out: Record<string, number> = {};
  for (const name of Object.keys(after)) {
    if (only.length > 0 && !only.includes(name)) continue;
    const delta = after[name] - (before[name] ?? 0);
    if (delta !== 0) out[name] = delta;
  }
  return out;
}
