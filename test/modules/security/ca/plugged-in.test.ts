import { expect } from 'chai';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { CaConfigError, MeshCertificateAuthority } from '../../../../src/modules/security/ca';
import { makeCsr, makeOperatorCa, OperatorCa, opensslVerify, testCaOptions, writeDir } from './helpers';

const ALICE = 'spiffe://cluster.local/ns/foo/sa/alice';

describe('CA: plugged-in CA from ROOT_CA_DIR', function () {
  this.timeout(60_000);
  let operator: OperatorCa;
  let other: OperatorCa;

  before(async () => {
    operator = await makeOperatorCa();
    other = await makeOperatorCa();
  });

  const create = (rootCaDir: string) => MeshCertificateAuthority.create(testCaOptions({ rootCaDir }));

  it('signs with ca-key.pem; chains are leaf, cert-chain.pem, root; openssl verifies them', async () => {
    const dir = writeDir({
      'ca-cert.pem': operator.intermediatePem,
      'ca-key.pem': operator.intermediateKeyPem,
      'root-cert.pem': operator.rootPem,
      'cert-chain.pem': operator.intermediatePem + operator.rootPem,
    });
    const ca = await create(dir);
    expect(ca.mode).to.equal('plugged-in');
    expect(ca.rootCertificates()).to.deep.equal([operator.rootPem]);
    const csr = await makeCsr({ kind: 'rsa', bits: 2048 });
    const { certChain } = await ca.sign({ csrPem: csr.csrPem, identities: [ALICE], ttlSeconds: 0 });
    expect(certChain).to.have.length(3);
    expect(certChain.slice(1)).to.deep.equal([operator.intermediatePem, operator.rootPem]);
    expect(await opensslVerify(certChain, [operator.rootPem])).to.match(/: OK$/);
    // Without the intermediate the leaf does not verify: the chain order matters.
    expect(await opensslVerify([certChain[0]], [operator.rootPem])).not.to.match(/: OK$/);
  });

  it('without cert-chain.pem, chains are leaf, ca-cert.pem, root', async () => {
    const dir = writeDir({ 'ca-cert.pem': operator.intermediatePem, 'ca-key.pem': operator.intermediateKeyPem, 'root-cert.pem': operator.rootPem });
    const ca = await create(dir);
    const csr = await makeCsr();
    const { certChain } = await ca.sign({ csrPem: csr.csrPem, identities: [ALICE], ttlSeconds: 0 });
    expect(certChain.slice(1)).to.deep.equal([operator.intermediatePem, operator.rootPem]);
    expect(await opensslVerify(certChain, [operator.rootPem])).to.match(/: OK$/);
    expect(ca.certChainExpiry().getTime()).to.be.below(ca.rootExpiry().getTime());
  });

  it('trusts every root of root-cert.pem', async () => {
    const dir = writeDir({ 'ca-cert.pem': operator.intermediatePem, 'ca-key.pem': operator.intermediateKeyPem, 'root-cert.pem': operator.rootPem + other.rootPem });
    const ca = await create(dir);
    expect(ca.rootCertificates()).to.deep.equal([operator.rootPem, other.rootPem]);
  });

  it('with no CA files in ROOT_CA_DIR, falls back to a self-signed root', async () => {
    const ca = await create(writeDir({}));
    expect(ca.mode).to.equal('self-signed');
    const missing = await create(path.join(writeDir({}), 'does-not-exist'));
    expect(missing.mode).to.equal('self-signed');
  });

  it('names the missing files when only some are there', async () => {
    const dir = writeDir({ 'ca-cert.pem': operator.intermediatePem });
    await expectConfigError(create(dir), /incomplete: ca-key\.pem, root-cert\.pem missing/);
  });

  it('refuses a ca-key.pem that does not match ca-cert.pem', async () => {
    const dir = writeDir({ 'ca-cert.pem': operator.intermediatePem, 'ca-key.pem': other.intermediateKeyPem, 'root-cert.pem': operator.rootPem });
    await expectConfigError(create(dir), new RegExp(`${escape(path.join(dir, 'ca-key.pem'))} does not match the certificate in ${escape(path.join(dir, 'ca-cert.pem'))}`));
  });

  it('names the file that is not valid', async () => {
    const badCert = writeDir({ 'ca-cert.pem': 'garbage', 'ca-key.pem': operator.intermediateKeyPem, 'root-cert.pem': operator.rootPem });
    await expectConfigError(create(badCert), new RegExp(`${escape(path.join(badCert, 'ca-cert.pem'))} holds no PEM certificate`));
    const badKey = writeDir({ 'ca-cert.pem': operator.intermediatePem, 'ca-key.pem': 'garbage', 'root-cert.pem': operator.rootPem });
    await expectConfigError(create(badKey), new RegExp(`${escape(path.join(badKey, 'ca-key.pem'))} is not a PEM private key`));
    const badRoot = writeDir({ 'ca-cert.pem': operator.intermediatePem, 'ca-key.pem': operator.intermediateKeyPem, 'root-cert.pem': '-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n' });
    await expectConfigError(create(badRoot), new RegExp(`${escape(path.join(badRoot, 'root-cert.pem'))} is not a valid certificate`));
  });

  it('refuses a ca-cert.pem that does not chain to root-cert.pem', async () => {
    const dir = writeDir({ 'ca-cert.pem': operator.intermediatePem, 'ca-key.pem': operator.intermediateKeyPem, 'root-cert.pem': other.rootPem });
    await expectConfigError(create(dir), /ca-cert\.pem does not chain to any certificate of .*root-cert\.pem/);
    const badChain = writeDir({
      'ca-cert.pem': operator.intermediatePem,
      'ca-key.pem': operator.intermediateKeyPem,
      'root-cert.pem': operator.rootPem,
      'cert-chain.pem': operator.intermediatePem + other.rootPem,
    });
    await expectConfigError(create(badChain), /cert-chain\.pem: certificate 1 .* is not issued by certificate 2/);
  });

  it('refuses a signing certificate that is not a CA', async () => {
    // The operator's root key with a leaf-like certificate: sign a workload cert and plug it in.
    const dir = writeDir({ 'ca-cert.pem': operator.intermediatePem, 'ca-key.pem': operator.intermediateKeyPem, 'root-cert.pem': operator.rootPem });
    const ca = await create(dir);
    const csr = await makeCsr();
    const { certChain } = await ca.sign({ csrPem: csr.csrPem, identities: [ALICE], ttlSeconds: 0 });
    const leafDir = writeDir({ 'ca-cert.pem': certChain[0], 'ca-key.pem': csr.keyPem, 'root-cert.pem': operator.rootPem });
    await expectConfigError(create(leafDir), /ca-cert\.pem is not a CA certificate/);
  });

  it('accepts PKCS#1 and SEC1 key files', async () => {
    const { createPrivateKey } = await import('node:crypto');
    const sec1 = createPrivateKey(operator.intermediateKeyPem).export({ type: 'sec1', format: 'pem' }).toString();
    expect(sec1).to.contain('BEGIN EC PRIVATE KEY');
    const dir = writeDir({ 'ca-cert.pem': operator.intermediatePem, 'ca-key.pem': sec1, 'root-cert.pem': operator.rootPem });
    expect((await create(dir)).mode).to.equal('plugged-in');
    // The root as its own CA (ca-cert = root), with an RSA PKCS#1 key.
    const pkcs1 = createPrivateKey(operator.rootKeyPem).export({ type: 'pkcs1', format: 'pem' }).toString();
    const rootDir = writeDir({ 'ca-cert.pem': operator.rootPem, 'ca-key.pem': pkcs1, 'root-cert.pem': operator.rootPem });
    const ca = await create(rootDir);
    const csr = await makeCsr();
    const { certChain } = await ca.sign({ csrPem: csr.csrPem, identities: [ALICE], ttlSeconds: 0 });
    expect(certChain.slice(1)).to.deep.equal([operator.rootPem]);
    expect(await opensslVerify(certChain, [operator.rootPem])).to.match(/: OK$/);
    fs.rmSync(rootDir, { recursive: true });
  });
});

async function expectConfigError(promise: Promise<unknown>, message: RegExp): Promise<void> {
  try {
    await promise;
  } catch (err) {
    expect(err).to.be.instanceOf(CaConfigError);
    expect((err as Error).message).to.match(message);
    return;
  }
  expect.fail('expected a CaConfigError');
}

function escape(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}
