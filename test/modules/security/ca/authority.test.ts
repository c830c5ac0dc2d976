import { expect } from 'chai';
import { X509Certificate } from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';
import {
  Certificate,
  CsrParseError,
  MeshCertificateAuthority,
  SELF_SIGNED_CERT_FILE,
  SELF_SIGNED_KEY_FILE,
  SignError,
} from '../../../../src/modules/security/ca';
import { makeCsr, opensslText, opensslVerify, tempDir, testCaOptions } from './helpers';

const ALICE = 'spiffe://cluster.local/ns/foo/sa/alice';
const HOUR = 3600_000;

describe('CA: self-signed root and workload certificates', function () {
  this.timeout(60_000);
  let ca: MeshCertificateAuthority;

  before(async () => {
    ca = await MeshCertificateAuthority.create(testCaOptions());
  });
  after(() => ca.stop());

  it('makes a self-signed root like the incumbent: O = trust domain, a CA for certificates and CRLs', async () => {
    expect(ca.mode).to.equal('self-signed');
    const roots = ca.rootCertificates();
    expect(roots).to.have.length(1);
    const root = new X509Certificate(roots[0]);
    expect(root.subject).to.equal('O=cluster.local');
    expect(root.issuer).to.equal('O=cluster.local');
    expect(root.ca).to.equal(true);
    const text = await opensslText(roots[0]);
    expect(text).to.match(/Public-Key: \(2048 bit\)/);
    expect(text).to.match(/X509v3 Key Usage: critical\s+Certificate Sign, CRL Sign/);
    expect(text).to.match(/X509v3 Basic Constraints: critical\s+CA:TRUE/);
  });

  it('signs an ECDSA CSR: the chain verifies with openssl against the root', async () => {
    const csr = await makeCsr({ kind: 'ec', curve: 'P-256' });
    const { certChain } = await ca.sign({ csrPem: csr.csrPem, identities: [ALICE], ttlSeconds: 3600 });
    expect(certChain).to.have.length(2);
    expect(certChain[1]).to.equal(ca.rootCertificates()[0]);
    expect(await opensslVerify(certChain, ca.rootCertificates())).to.match(/: OK$/);
    // The certificate carries the CSR's key: its private key matches.
    expect(new X509Certificate(certChain[0]).checkPrivateKey(require('node:crypto').createPrivateKey(csr.keyPem))).to.equal(true);
  });

  it('signs RSA and ECDSA P-384 CSRs', async () => {
    for (const spec of [{ kind: 'rsa', bits: 2048 }, { kind: 'ec', curve: 'P-384' }] as const) {
      const csr = await makeCsr(spec);
      const { certChain } = await ca.sign({ csrPem: csr.csrPem, identities: [ALICE], ttlSeconds: 0 });
      expect(await opensslVerify(certChain, ca.rootCertificates()), spec.kind).to.match(/: OK$/);
    }
  });

  it("names only the caller's identity, never what the CSR asks for", async () => {
    const csr = await makeCsr({ kind: 'ec', curve: 'P-256' }, ['spiffe://cluster.local/ns/kube-system/sa/admin', 'evil.example.com']);
    const { certChain } = await ca.sign({ csrPem: csr.csrPem, identities: [ALICE], ttlSeconds: 0 });
    const leaf = new X509Certificate(certChain[0]);
    expect(leaf.subjectAltName).to.equal(`URI:${ALICE}`);
    expect(leaf.subject ?? '').to.equal('');
    expect(leaf.ca).to.equal(false);
    expect(leaf.keyUsage).to.have.members(['1.3.6.1.5.5.7.3.1', '1.3.6.1.5.5.7.3.2']);
    const text = await opensslText(certChain[0]);
    expect(text).to.match(/X509v3 Key Usage: critical\s+Digital Signature, Key Encipherment/);
    expect(text).to.match(/X509v3 Subject Alternative Name: critical\s+URI:spiffe:\/\/cluster.local\/ns\/foo\/sa\/alice\s/);
    expect(text).not.to.contain('requested');
  });

  it('applies DEFAULT_WORKLOAD_CERT_TTL to non-positive requests and caps at MAX_WORKLOAD_CERT_TTL', async () => {
    const csr = await makeCsr();
    const lifetimeOf = async (ttlSeconds: number) => {
      const { certChain } = await ca.sign({ csrPem: csr.csrPem, identities: [ALICE], ttlSeconds });
      const leaf = Certificate.fromPem(certChain[0], 'leaf');
      return leaf.notAfter.getTime() - leaf.notBefore.getTime();
    };
    const near = (actual: number, expected: number) => expect(Math.abs(actual - expected)).to.be.below(2000, `${actual} vs ${expected}`);
    near(await lifetimeOf(0), 24 * HOUR);
    near(await lifetimeOf(-5), 24 * HOUR);
    near(await lifetimeOf(2 * 3600), 2 * HOUR);
    near(await lifetimeOf(365 * 24 * 3600), 90 * 24 * HOUR);
  });

  it('rejects CSRs that do not parse or whose signature does not verify, with CsrParseError', async () => {
    await expectRejection(ca.sign({ csrPem: 'not a csr', identities: [ALICE], ttlSeconds: 0 }), CsrParseError, /not a PEM "CERTIFICATE REQUEST"/);
    const garbage = '-----BEGIN CERTIFICATE REQUEST-----\nAAAA\n-----END CERTIFICATE REQUEST-----\n';
    await expectRejection(ca.sign({ csrPem: garbage, identities: [ALICE], ttlSeconds: 0 }), CsrParseError, /does not parse/);
    // A CSR whose public key was swapped: its signature no longer verifies.
    const a = await makeCsr();
    const b = await makeCsr();
    const tampered = swapCsrPublicKey(a.csrPem, b.csrPem);
    await expectRejection(ca.sign({ csrPem: tampered, identities: [ALICE], ttlSeconds: 0 }), CsrParseError, /signature does not verify/);
  });

  it('refuses identities that are not names, with SignError', async () => {
    const csr = await makeCsr();
    await expectRejection(ca.sign({ csrPem: csr.csrPem, identities: [], ttlSeconds: 0 }), SignError, /no identity/);
    await expectRejection(ca.sign({ csrPem: csr.csrPem, identities: ['not a name!'], ttlSeconds: 0 }), SignError, /neither a URI/);
  });

  it("issues the daemon's server certificate: a new P-256 key, DNS names, verifying chain", async () => {
    const server = await ca.issueServerCertificate(['meshd.mesh-system.svc', 'localhost', '127.0.0.1'], HOUR);
    const chain = server.certChainPem.match(/-----BEGIN CERTIFICATE-----[\s\S]*?-----END CERTIFICATE-----\n/g)!;
    expect(chain).to.have.length(2);
    const leaf = new X509Certificate(chain[0]);
    expect(leaf.subjectAltName).to.equal('DNS:meshd.mesh-system.svc, DNS:localhost, IP Address:127.0.0.1');
    const key = require('node:crypto').createPrivateKey(server.keyPem);
    expect(key.asymmetricKeyDetails.namedCurve).to.equal('prime256v1');
    expect(leaf.checkPrivateKey(key)).to.equal(true);
    expect(leaf.checkHost('meshd.mesh-system.svc')).to.equal('meshd.mesh-system.svc');
    expect(await opensslVerify(chain, ca.rootCertificates())).to.match(/: OK$/);
    await expectRejection(ca.issueServerCertificate(['x'], 0), SignError, /must be positive/);
  });
});

describe('CA: lifetimes never outlive the signing root', function () {
  this.timeout(60_000);

  it('caps a leaf at the root expiry and refuses to sign once the root expired', async () => {
    let now = Date.now();
    const ca = await MeshCertificateAuthority.create(testCaOptions({ selfSigned: { rsaKeySize: 2048, ttlMs: 2 * HOUR }, now: () => now }));
    const csr = await makeCsr();
    const { certChain } = await ca.sign({ csrPem: csr.csrPem, identities: [ALICE], ttlSeconds: 24 * 3600 });
    const leaf = Certificate.fromPem(certChain[0], 'leaf');
    const root = Certificate.fromPem(certChain[1], 'root');
    expect(leaf.notAfter.getTime()).to.equal(root.notAfter.getTime());
    now += 3 * HOUR;
    await expectRejection(ca.sign({ csrPem: csr.csrPem, identities: [ALICE], ttlSeconds: 0 }), SignError, /expired/);
  });
});

describe('CA: the self-signed root persists across restarts', function () {
  this.timeout(60_000);

  it('writes the key with mode 0600 and reuses the root on the next start', async () => {
    const dir = path.join(tempDir(), 'state');
    const first = await MeshCertificateAuthority.create(testCaOptions({ persistDir: dir }));
    expect(fs.statSync(path.join(dir, SELF_SIGNED_KEY_FILE)).mode & 0o777).to.equal(0o600);
    expect(fs.readFileSync(path.join(dir, SELF_SIGNED_CERT_FILE), 'utf8')).to.equal(first.rootCertificates()[0]);
    const second = await MeshCertificateAuthority.create(testCaOptions({ persistDir: dir }));
    expect(second.rootCertificates()).to.deep.equal(first.rootCertificates());
    // The reloaded key signs: a certificate from the second verifies against the first's root.
    const csr = await makeCsr();
    const { certChain } = await second.sign({ csrPem: csr.csrPem, identities: [ALICE], ttlSeconds: 0 });
    expect(await opensslVerify(certChain, first.rootCertificates())).to.match(/: OK$/);
  });

  it('replaces a persisted root that has expired', async () => {
    const dir = tempDir();
    let now = Date.now();
    const first = await MeshCertificateAuthority.create(testCaOptions({ persistDir: dir, selfSigned: { rsaKeySize: 2048, ttlMs: HOUR }, now: () => now }));
    now += 2 * HOUR;
    const second = await MeshCertificateAuthority.create(testCaOptions({ persistDir: dir, selfSigned: { rsaKeySize: 2048, ttlMs: HOUR }, now: () => now }));
    expect(second.rootCertificates()[0]).not.to.equal(first.rootCertificates()[0]);
    expect(fs.readFileSync(path.join(dir, SELF_SIGNED_CERT_FILE), 'utf8')).to.equal(second.rootCertificates()[0]);
  });
});

async function expectRejection(promise: Promise<unknown>, type: new (...args: never[]) => Error, message: RegExp): Promise<void> {
  try {
    await promise;
  } catch (err) {
    expect(err).to.be.instanceOf(type);
    expect((err as Error).message).to.match(message);
    return;
  }
  expect.fail(`expected a ${type.name}`);
}

/** `a` with the public key of `b`: same shape, but a's signature no longer matches. */
function swapCsrPublicKey(aPem: string, bPem: string): string {
  const der = (pem: string) => Buffer.from(pem.replace(/-----[^-]+-----/g, '').replace(/\s+/g, ''), 'base64');
  const a = der(aPem);
  const b = der(bPem);
  // Both are P-256 CSRs with the same subject: their SubjectPublicKeyInfo (91 bytes, starting
  // 30 59 30 13) sits at the same offset.
  const spki = Buffer.from([0x30, 0x59, 0x30, 0x13]);
  const at = a.indexOf(spki);
  const from = b.indexOf(spki);
  expect(at).to.be.greaterThan(0);
  const swapped = Buffer.concat([a.subarray(0, at), b.subarray(from, from + 91), a.subarray(at + 91)]);
  return `-----BEGIN CERTIFICATE REQUEST-----\n${swapped.toString('base64')}\n-----END CERTIFICATE REQUEST-----\n`;
}
