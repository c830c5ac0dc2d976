/**
 * The agent's credentials: its private key per ECC_SIGNATURE_ALGORITHM / ECC_CURVE (RSA by
 * default), a CSR openssl accepts, and the token file per JWT_POLICY; and the daemon's
 * XDS_AUTH_PLAINTEXT, which makes plain-text xDS callers authenticate too.
 */
import { expect } from 'chai';
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import * as grpc from '@grpc/grpc-js';
import { certificateRequest, generateWorkloadKey, keySpecFrom, WorkloadKeyError } from '../../../src/modules/agent/security/workload-key';
import { readToken, TokenError, tokenPath } from '../../../src/modules/agent/security/token';
import { TypeUrl } from '../../../src/modules/envoy/type-urls';
import { sidecarNode, SotwClient } from '../../helpers/ads-client';
import { startDaemon } from '../../helpers/daemon';

describe('agent credentials', () => {
  it('makes RSA 2048 keys by default and ECDSA ones per ECC_SIGNATURE_ALGORITHM and ECC_CURVE', () => {
    expect(keySpecFrom({ eccCurve: 'P256', rsaKeySize: 2048 })).to.deep.equal({ kind: 'RSA', bits: 2048 });
    expect(keySpecFrom({ eccSignatureAlgorithm: 'ECDSA', eccCurve: 'P384', rsaKeySize: 2048 })).to.deep.equal({ kind: 'ECDSA', curve: 'P-384' });
    expect(() => keySpecFrom({ eccSignatureAlgorithm: 'DSA', eccCurve: 'P256', rsaKeySize: 2048 })).to.throw(WorkloadKeyError, /ECC_SIGNATURE_ALGORITHM: "DSA"/);
    expect(() => keySpecFrom({ eccSignatureAlgorithm: 'ECDSA', eccCurve: 'P521', rsaKeySize: 2048 })).to.throw(WorkloadKeyError, /ECC_CURVE: "P521"/);
    expect(() => keySpecFrom({ eccCurve: 'P256', rsaKeySize: 1024 })).to.throw(WorkloadKeyError, /WORKLOAD_RSA_KEY_SIZE/);
  });

  for (const spec of [{ kind: 'RSA', bits: 2048 } as const, { kind: 'ECDSA', curve: 'P-256' } as const]) {
    it(`writes a ${spec.kind} CSR that openssl verifies, naming the workload identity`, async () => {
      const key = await generateWorkloadKey(spec);
      const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'mesh-csr-'));
      fs.writeFileSync(path.join(dir, 'req.pem'), await certificateRequest(key, 'spiffe://cluster.local/ns/foo/sa/web'));
      const out = execFileSync('openssl', ['req', '-in', path.join(dir, 'req.pem'), '-noout', '-verify', '-text'], { stdio: ['ignore', 'pipe', 'pipe'] }).toString();
      expect(out).to.contain('URI:spiffe://cluster.local/ns/foo/sa/web');
      expect(out).to.contain(spec.kind === 'RSA' ? 'rsaEncryption' : 'id-ecPublicKey');
      expect(key.keyPem).to.match(/^-----BEGIN PRIVATE KEY-----/);
    });
  }

  it('finds the token file by JWT_POLICY, MESH_JWT_PATH first, and says what is wrong with it', () => {
    expect(tokenPath('third-party-jwt', undefined)).to.equal('./var/run/secrets/tokens/mesh-token');
    expect(tokenPath('third-party-jwt', '/run/token')).to.equal('/run/token');
    expect(() => tokenPath('fourth-party-jwt', undefined)).to.throw(TokenError, /JWT_POLICY: "fourth-party-jwt"/);
    expect(() => readToken('/nonexistent/token')).to.throw(TokenError, /cannot read the workload token \/nonexistent\/token: ENOENT/);
  });
});

describe('XDS_AUTH_PLAINTEXT', function () {
  this.timeout(30_000);

  it('makes plain-text xDS callers authenticate (UNAUTHENTICATED without credentials); off by default', async () => {
    for (const [env, expected] of [[{ XDS_AUTH_PLAINTEXT: 'true' }, grpc.status.UNAUTHENTICATED], [{}, undefined]] as const) {
      const daemon = await startDaemon([], env);
      const client = new SotwClient(daemon.grpcPort, sidecarNode('127.0.0.84', 'foo'));
      try {
        client.send({ type_url: TypeUrl.Cluster });
        const outcome = await client.next(TypeUrl.Cluster).then(() => undefined, (e: grpc.ServiceError) => e.code);
        expect(outcome, JSON.stringify(env)).to.equal(expected);
      } finally {
        client.close();
        await daemon.stop();
      }
    }
  });
});
