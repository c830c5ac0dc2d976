import { expect } from 'chai';
import { X509Certificate } from 'node:crypto';
import { CaLogger, Certificate, MeshCertificateAuthority } from '../../../../src/modules/security/ca';
import { makeCsr, opensslVerify, tempDir, testCaOptions } from './helpers';

const ALICE = 'spiffe://cluster.local/ns/foo/sa/alice';
const HOUR = 3600_000;

function capturingLogger(): CaLogger & { lines: string[] } {
  const lines: string[] = [];
  const log = (msg: string) => lines.push(msg);
  return { lines, debug: log, info: log, warn: log, error: log };
}

function publicKeyOf(pem: string): string {
  return new X509Certificate(pem).publicKey.export({ type: 'spki', format: 'pem' }).toString();
}

describe('CA: self-signed root rotation', function () {
  this.timeout(60_000);

  it('rotates a short-lived root on its timer, keeps the old one trusted until it expires, then drops it', async () => {
    const logger = capturingLogger();
    const ca = await MeshCertificateAuthority.create(
      testCaOptions({
        selfSigned: { rsaKeySize: 2048, ttlMs: 4000 },
        rotation: { checkIntervalMs: 1000, gracePeriodPercentile: 50, jitter: false },
        workloadCertTtl: { defaultMs: HOUR, maxMs: HOUR },
        rotatorLogger: logger,
      }),
    );
    try {
      const [oldRoot] = ca.rootCertificates();
      const csr = await makeCsr();
      const before = await ca.sign({ csrPem: csr.csrPem, identities: [ALICE], ttlSeconds: 0 });
      const changes: string[][] = [];
      const rotated = new Promise<string[]>((resolve) => ca.onRootsChanged((roots) => (changes.push(roots), changes.length === 1 && resolve(roots))));

      const bundle = await rotated;
      expect(bundle).to.have.length(2);
      const [newRoot] = bundle;
      expect(bundle[1]).to.equal(oldRoot);
      expect(newRoot).not.to.equal(oldRoot);
      // Same key and subject, as the incumbent's rotator: leaves of either root verify against either.
      expect(publicKeyOf(newRoot)).to.equal(publicKeyOf(oldRoot));
      expect(new X509Certificate(newRoot).serialNumber).not.to.equal(new X509Certificate(oldRoot).serialNumber);
      expect(ca.rootCertificates()).to.deep.equal(bundle);
      expect(logger.lines.some((line) => /below the grace period of 50% of its lifetime; rotating it/.test(line))).to.equal(true);

      // New certificates come from the new root; old and new ones both verify against the bundle.
      const after = await ca.sign({ csrPem: csr.csrPem, identities: [ALICE], ttlSeconds: 0 });
      expect(after.certChain[1]).to.equal(newRoot);
      expect(await opensslVerify(after.certChain, bundle)).to.match(/: OK$/);
      expect(await opensslVerify(before.certChain, bundle)).to.match(/: OK$/);

      // Once the old root expired, it leaves the bundle.
      const deadline = Date.now() + 10_000;
      while (!changes.some((roots) => !roots.includes(oldRoot)) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
      const withoutOld = changes.find((roots) => !roots.includes(oldRoot));
      expect(withoutOld, 'the old root leaves the trust bundle').to.not.equal(undefined);
      expect(withoutOld).to.include(newRoot);
    } finally {
      ca.stop();
    }
  });

  it('decides by the grace-period percentile of the injected clock; persists the new root and the old one', async () => {
    const start = Date.now();
    let now = start;
    const dir = tempDir();
    const options = testCaOptions({
      persistDir: dir,
      selfSigned: { rsaKeySize: 2048, ttlMs: 10 * HOUR },
      rotation: { checkIntervalMs: 0, gracePeriodPercentile: 20, jitter: false },
      now: () => now,
    });
    const ca = await MeshCertificateAuthority.create(options);
    const [first] = ca.rootCertificates();
    now = start + 7 * HOUR; // 3 h of 10 left: above the 2 h grace period
    expect(await ca.checkRootRotation()).to.equal(false);
    now = start + 8.5 * HOUR; // 1.5 h left
    expect(await ca.checkRootRotation()).to.equal(true);
    const [second] = ca.rootCertificates();
    expect(ca.rootCertificates()).to.deep.equal([second, first]);

    // A restart in the overlap keeps signing with the new root and trusting both.
    const restarted = await MeshCertificateAuthority.create(options);
    expect(restarted.rootCertificates()).to.deep.equal([second, first]);

    now = start + 10.5 * HOUR; // the first root expired
    expect(await ca.checkRootRotation()).to.equal(false);
    expect(ca.rootCertificates()).to.deep.equal([second]);
    expect(ca.rootExpiry().getTime()).to.equal(Certificate.fromPem(second, 'second root').notAfter.getTime());
  });

  it('with jitter, the first check comes after a random delay below the interval; zero interval disables', async () => {
    const logger = capturingLogger();
    const jittered = await MeshCertificateAuthority.create(
      testCaOptions({ rotation: { checkIntervalMs: 60_000, gracePeriodPercentile: 20, jitter: true }, random: () => 0.25, rotatorLogger: logger }),
    );
    jittered.stop();
    expect(logger.lines).to.include('root certificate rotator checks every 60000 ms, first in 15000 ms');

    const quiet = capturingLogger();
    const disabled = await MeshCertificateAuthority.create(testCaOptions({ rotation: { checkIntervalMs: 0, gracePeriodPercentile: 20, jitter: true }, rotatorLogger: quiet }));
    disabled.stop();
    expect(quiet.lines.filter((line) => line.includes('rotator'))).to.deep.equal([]);
  });
});
