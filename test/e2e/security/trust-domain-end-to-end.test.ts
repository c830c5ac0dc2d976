/**
 * Issue acceptance: `--meshConfig` with `trustDomain` and `trustDomainAliases` changes the
 * principals of generated RBAC (as a real xDS client receives them in LDS) and the SPIFFE IDs
 * of the certificates the CA issues (from its gRPC service, with a real token); changing the
 * file's trust domain while the daemon runs changes both, without a restart.
 */
import { expect } from 'chai';
import { X509Certificate } from 'node:crypto';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import * as grpc from '@grpc/grpc-js';
import { caClientConstructor } from '../../../src/modules/security/ca';
import { resourcesOf, sidecarNode, SotwClient } from '../../helpers/ads-client';
import { RunningDaemon, startDaemon } from '../../helpers/daemon';
import { JwksServer, SigningKey, signingKey, startJwksServer, token } from '../../helpers/jwt';
import { workloadServiceYaml } from '../../helpers/push';
import { makeCsr } from '../../modules/security/ca/helpers';
import { principalsByPolicy } from '../../helpers/rbac';

const LDS = 'type.googleapis.com/envoy.config.listener.v3.Listener';
const ORCH_ISSUER = 'https://orch.test';

const CONFIG = `
${workloadServiceYaml({ namespace: 'foo', name: 'httpbin', address: '10.0.0.10', ports: ['{ number: 8000, name: http, protocol: HTTP, targetPort: 8080 }'] })}
---
apiVersion: security.mesh.io/v1
kind: AuthorizationPolicy
metadata: { name: allow-bar, namespace: foo }
spec:
  selector: { matchLabels: { app: httpbin } }
  rules: [{ from: [{ source: { principals: ["cluster.local/ns/foo/sa/bar"] } }] }]
---
apiVersion: security.mesh.io/v1
kind: AuthorizationPolicy
metadata: { name: deny-elsewhere, namespace: foo }
spec:
  selector: { matchLabels: { app: httpbin } }
  action: DENY
  rules: [{ from: [{ source: { principals: ["elsewhere.org/ns/bad/sa/x"] } }] }]
`;

describe('trust domain and aliases from --meshConfig: RBAC principals and issued SPIFFE IDs, live (end to end)', function () {
  this.timeout(60_000);
  let dir: string;
  let key: SigningKey;
  let jwks: JwksServer;
  let daemon: RunningDaemon;
  let xds: SotwClient;
  let ca: grpc.Client;
  const meshFile = () => path.join(dir, 'mesh.yaml');

  before(async () => {
    key = await signingKey('orch-1');
    jwks = await startJwksServer([key]);
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'mesh-trust-domain-'));
    fs.mkdirSync(path.join(dir, 'config'));
    fs.writeFileSync(path.join(dir, 'config', 'httpbin.yaml'), CONFIG);
    fs.writeFileSync(meshFile(), 'trustDomain: td1\ntrustDomainAliases: [cluster.local, td2]\n');
    daemon = await startDaemon(['--configDir', path.join(dir, 'config'), '--meshConfig', meshFile()], {
      PILOT_DEBOUNCE_AFTER: '10ms',
      PILOT_DEBOUNCE_MAX: '100ms',
      JWT_RULE: JSON.stringify({ issuer: ORCH_ISSUER, jwksUri: jwks.url }),
    });
    xds = new SotwClient(daemon.grpcPort, sidecarNode('10.0.0.10', 'foo', { LABELS: JSON.stringify({ app: 'httpbin', version: 'v1' }) }));
    const Client = caClientConstructor();
    const server = 'meshd.mesh-system.svc';
    ca = new Client(`127.0.0.1:${daemon.secureGrpcPort}`, grpc.credentials.createSsl(Buffer.from(daemon.rootCertPem())), {
      'grpc.ssl_target_name_override': server,
      'grpc.default_authority': server,
    });
  });
  after(async () => {
    xds?.close();
    ca?.close();
    await daemon?.stop();
    await jwks?.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  /** The next LDS response's inbound listener of httpbin, acknowledged. */
  async function inboundListener(): Promise<Record<string, unknown>> {
    const response = await xds.next(LDS, 10_000);
    xds.ack(response);
    const listener = resourcesOf(response).find((l) => l.name === '10.0.0.10_8000');
    expect(listener, 'inbound listener 10.0.0.10_8000').to.not.equal(undefined);
    return listener!;
  }

  /** The URI SANs of a certificate the CA issues to foo/bar, asked for with bar's token. */
  async function issuedUris(): Promise<string[]> {
    const csr = await makeCsr(undefined, ['spiffe://requested/ns/x/sa/y']);
    const metadata = new grpc.Metadata();
    metadata.set('authorization', `Bearer ${await token(key, { iss: ORCH_ISSUER, sub: 'system:serviceaccount:foo:bar', aud: 'mesh-ca' })}`);
    const chain = await new Promise<string[]>((resolve, reject) =>
      (ca as unknown as Record<string, Function>).CreateCertificate(
        { csr: csr.csrPem, validity_duration: 3600 },
        metadata,
        (err: grpc.ServiceError | null, response: { cert_chain: string[] }) => (err ? reject(err) : resolve(response.cert_chain)),
      ),
    );
    const san = new X509Certificate(chain[0]).subjectAltName ?? '';
    return san.split(', ').filter((s) => s.startsWith('URI:')).map((s) => s.slice(4));
  }

  it('rewrites policy principals to the trust domain and every alias, and issues certificates in the trust domain', async () => {
    xds.send({ type_url: LDS });
    expect(principalsByPolicy(await inboundListener())).to.deep.equal({
      'ns[foo]-policy[deny-elsewhere]-rule[0]': ['spiffe://elsewhere.org/ns/bad/sa/x'],
      'ns[foo]-policy[allow-bar]-rule[0]': ['spiffe://td1/ns/foo/sa/bar', 'spiffe://cluster.local/ns/foo/sa/bar', 'spiffe://td2/ns/foo/sa/bar'],
    });
    expect(await issuedUris()).to.deep.equal(['spiffe://td1/ns/foo/sa/bar']);
  });

  it('follows a new trustDomain in the file without a restart: the proxy gets new principals, the CA issues in the new domain', async () => {
    const pushes = daemon.output().length;
    fs.writeFileSync(meshFile(), 'trustDomain: td3\ntrustDomainAliases: [td1]\n');
    expect(principalsByPolicy(await inboundListener())['ns[foo]-policy[allow-bar]-rule[0]']).to.deep.equal([
      'spiffe://td3/ns/foo/sa/bar',
      'spiffe://td1/ns/foo/sa/bar',
    ]);
    expect(await issuedUris()).to.deep.equal(['spiffe://td3/ns/foo/sa/bar']);
    await daemon.waitForLog(/mesh config: trust domain td3, root namespace mesh-system/, 5000, pushes);
    await daemon.waitForLog(/\(full: global\)/, 5000, pushes);
  });

  it('refuses a broken version of the file with the error logged (file and field), and keeps serving the last good one', async () => {
    const since = daemon.output().length;
    fs.writeFileSync(meshFile(), 'trustDomain: td4\ntrustDomainAliases: [td1, "not a domain"]\n');
    await daemon.waitForLog(
      new RegExp(`mesh config rejected, the last good version stays in force: --meshConfig ${meshFile()}: trustDomainAliases\\[1\\]: "not a domain" is not a valid trust domain`),
      5000,
      since,
    );
    expect(await xds.nothingFor(500, LDS)).to.equal(undefined);
    expect(await issuedUris()).to.deep.equal(['spiffe://td3/ns/foo/sa/bar']);

    fs.rmSync(meshFile());
    await daemon.waitForLog(/the file is gone; the last good mesh config stays in force/, 5000, since);
    expect(await issuedUris()).to.deep.equal(['spiffe://td3/ns/foo/sa/bar']);
  });

  it('takes a ConfigMap-style update (the file a symlink through ..data, swapped by rename)', async () => {
    const since = daemon.output().length;
    // What an orchestrator ConfigMap volume looks like: mesh.yaml -> ..data/mesh.yaml, ..data -> ..<version>.
    const version1 = path.join(dir, '..v1');
    fs.mkdirSync(version1);
    fs.writeFileSync(path.join(version1, 'mesh.yaml'), 'trustDomain: td5\n');
    fs.symlinkSync('..v1', path.join(dir, '..data'));
    fs.symlinkSync(path.join('..data', 'mesh.yaml'), meshFile());
    expect(principalsByPolicy(await inboundListener())['ns[foo]-policy[allow-bar]-rule[0]']).to.deep.equal([
      'spiffe://td5/ns/foo/sa/bar',
    ]);

    const version2 = path.join(dir, '..v2');
    fs.mkdirSync(version2);
    fs.writeFileSync(path.join(version2, 'mesh.yaml'), 'trustDomain: td6\n');
    fs.symlinkSync('..v2', path.join(dir, '..data_tmp'));
    fs.renameSync(path.join(dir, '..data_tmp'), path.join(dir, '..data'));
    fs.rmSync(version1, { recursive: true });
    expect(principalsByPolicy(await inboundListener())['ns[foo]-policy[allow-bar]-rule[0]']).to.deep.equal([
      'spiffe://td6/ns/foo/sa/bar',
    ]);
    expect(await issuedUris()).to.deep.equal(['spiffe://td6/ns/foo/sa/bar']);
    expect(daemon.output().slice(since)).to.not.match(/rejected/);
  });
});
