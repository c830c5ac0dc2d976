import { expect } from 'chai';
import { rotatingServerCredentials } from '../../../../src/modules/security/tls/server-credentials';
import { X509Certificate } from 'node:crypto';
import * as grpc from '@grpc/grpc-js';
import { SignJWT } from 'jose';
import { Registry } from 'prom-client';
import {
  CaMetrics,
  caClientConstructor,
  caOptionsFrom,
  caServiceDefinition,
  certificateServiceFor,
  IMPERSONATED_IDENTITY_METADATA,
  MeshCertificateAuthority,
} from '../../../../src/modules/security/ca';
import { Settings } from '../../../../src/modules/settings';
import { JwksServer, jwksOf, newSigningKey, SigningKey } from '../authn-jwks-server';
import { changed, makeCsr, metricValues, opensslVerify, testCaOptions, TestCsr } from './helpers';

const ALICE = 'spiffe://cluster.local/ns/foo/sa/alice';
const BOB = 'spiffe://cluster.local/ns/bar/sa/bob';
const CAROL = 'spiffe://cluster.local/ns/baz/sa/carol';
const SERVER_NAME = 'meshd.mesh-system.svc';
const COUNTERS = [
  'ca_server_csr_count',
  'ca_server_authentication_failure_count',
  'ca_server_csr_parsing_err_count',
  'ca_server_csr_sign_err_count',
  'ca_server_id_extraction_err_count',
  'ca_server_success_cert_issuance_count',
];

interface Request {
  csr: string;
  validity_duration?: number;
  metadata?: unknown;
}

describe('CA gRPC service: MeshCertificateService/CreateCertificate over TLS', function () {
  this.timeout(60_000);
  let jwks: JwksServer;
  let key: SigningKey;
  let ca: MeshCertificateAuthority;
  let caNow: number | undefined;
  let registry: Registry;
  let server: grpc.Server;
  let port: number;
  let csr: TestCsr;
  const clients: grpc.Client[] = [];

  before(async () => {
    key = await newSigningKey('k1', 'ES256');
    jwks = await JwksServer.start(jwksOf(key));
    const settings = new Settings('pilot-discovery', {
      TOKEN_ISSUER: jwks.url(''),
      TOKEN_AUDIENCES: 'mesh-ca,other-ca',
      CA_TRUSTED_NODE_ACCOUNTS: 'mesh-system/node-agent',
      ROOT_CA_DIR: '',
    });
    const options = caOptionsFrom(settings, {
      identitiesOnNode: (node) => new Set(node === 'node-1' ? [BOB] : []),
    });
    ca = await MeshCertificateAuthority.create({ ...options.authority, now: () => caNow ?? Date.now() });
    registry = new Registry();
    const metrics = new CaMetrics(registry);
    server = new grpc.Server();
    server.addService(caServiceDefinition(), certificateServiceFor(ca, options, { metrics }));
    const identity = await ca.issueServerCertificate([SERVER_NAME], 3600_000);
    port = await new Promise<number>((resolve, reject) =>
      server.bindAsync('127.0.0.1:0', rotatingServerCredentials({ ...identity, rootsPem: ca.rootCertificates().join('') }), (err, bound) => (err ? reject(err) : resolve(bound))),
    );
    csr = await makeCsr();
  });

  after(async () => {
    for (const client of clients) client.close();
    await new Promise<void>((resolve) => server.tryShutdown(() => resolve()));
    ca.stop();
    await jwks.stop();
  });

  function client(clientCert?: { keyPem: string; certChain: string[] }): grpc.Client {
    const Client = caClientConstructor();
    const credentials = grpc.credentials.createSsl(
      Buffer.from(ca.rootCertificates().join('')),
      clientCert ? Buffer.from(clientCert.keyPem) : null,
      clientCert ? Buffer.from(clientCert.certChain.join('')) : null,
    );
    const made = new Client(`127.0.0.1:${port}`, credentials, { 'grpc.ssl_target_name_override': SERVER_NAME, 'grpc.default_authority': SERVER_NAME });
    clients.push(made);
    return made;
  }

  function createCertificate(via: grpc.Client, request: Request, headers: Record<string, string> = {}): Promise<string[]> {
    const metadata = new grpc.Metadata();
    for (const [name, value] of Object.entries(headers)) metadata.set(name, value);
    return new Promise((resolve, reject) =>
      (via as unknown as Record<string, Function>).CreateCertificate(request, metadata, (err: grpc.ServiceError | null, response: { cert_chain: string[] }) =>
        err ? reject(err) : resolve(response.cert_chain),
      ),
    );
  }

  async function token(claims: { sub?: string; aud?: string | string[]; expiresIn?: number; iss?: string; [claim: string]: unknown }): Promise<string> {
    const { sub, aud, expiresIn, iss, ...rest } = claims;
    const now = Math.floor(Date.now() / 1000);
    const jwt = new SignJWT(rest)
      .setProtectedHeader({ alg: 'ES256', kid: key.kid })
      .setIssuer(iss ?? jwks.url(''))
      .setIssuedAt(now - 60)
      .setExpirationTime(now + (expiresIn ?? 600));
    if (sub) jwt.setSubject(sub);
    if (aud) jwt.setAudience(aud);
    return jwt.sign(key.privateKey);
  }

  const bearer = (jwt: string) => ({ authorization: `Bearer ${jwt}` });

  /** Runs `call`, then returns the counters that moved. */
  async function metricsMovedBy(call: () => Promise<unknown>): Promise<Record<string, number>> {
    const before = await metricValues(registry);
    await call().catch(() => undefined);
    return changed(before, await metricValues(registry), COUNTERS);
  }

  async function failure(call: Promise<unknown>): Promise<grpc.ServiceError> {
    try {
      await call;
    } catch (err) {
      return err as grpc.ServiceError;
    }
    return expect.fail('the call succeeded') as never;
  }

  it("signs for the token's service account: chain verifies with openssl, SAN is the SPIFFE ID", async () => {
    const jwt = await token({ sub: 'system:serviceaccount:foo:alice', aud: 'mesh-ca' });
    let chain: string[] = [];
    const moved = await metricsMovedBy(async () => {
      chain = await createCertificate(client(), { csr: csr.csrPem, validity_duration: 3600 }, bearer(jwt));
    });
    expect(moved).to.deep.equal({ ca_server_csr_count: 1, ca_server_success_cert_issuance_count: 1 });
    expect(chain).to.have.length(2);
    expect(new X509Certificate(chain[0]).subjectAltName).to.equal(`URI:${ALICE}`);
    expect(chain[chain.length - 1]).to.equal(ca.rootCertificates()[0]);
    expect(await opensslVerify(chain, ca.rootCertificates())).to.match(/: OK$/);
  });

  it('a token whose audience is not in TOKEN_AUDIENCES: UNAUTHENTICATED, counted as an authentication failure only', async () => {
    const jwt = await token({ sub: 'system:serviceaccount:foo:alice', aud: 'someone-else' });
    let error: grpc.ServiceError | undefined;
    const moved = await metricsMovedBy(async () => {
      error = await failure(createCertificate(client(), { csr: csr.csrPem }, bearer(jwt)));
    });
    expect(error!.code).to.equal(grpc.status.UNAUTHENTICATED);
    expect(error!.details).to.match(/audience "someone-else" matches none of the accepted audiences \(TOKEN_AUDIENCES: mesh-ca, other-ca\)/);
    expect(moved).to.deep.equal({ ca_server_csr_count: 1, ca_server_authentication_failure_count: 1 });
  });

  it('an expired token: UNAUTHENTICATED saying so, counted as an authentication failure only', async () => {
    const jwt = await token({ sub: 'system:serviceaccount:foo:alice', aud: 'mesh-ca', expiresIn: -120 });
    let error: grpc.ServiceError | undefined;
    const moved = await metricsMovedBy(async () => {
      error = await failure(createCertificate(client(), { csr: csr.csrPem }, bearer(jwt)));
    });
    expect(error!.code).to.equal(grpc.status.UNAUTHENTICATED);
    expect(error!.details).to.match(/the token expired at/);
    expect(moved).to.deep.equal({ ca_server_csr_count: 1, ca_server_authentication_failure_count: 1 });
  });

  it('a token from another issuer, or signed by another key: UNAUTHENTICATED saying which', async () => {
    const wrongIssuer = await token({ sub: 'system:serviceaccount:foo:alice', aud: 'mesh-ca', iss: 'https://elsewhere.example' });
    const error = await failure(createCertificate(client(), { csr: csr.csrPem }, bearer(wrongIssuer)));
    expect(error.code).to.equal(grpc.status.UNAUTHENTICATED);
    expect(error.details).to.match(/issuer "https:\/\/elsewhere.example" is not the expected/);

    const impostor = await newSigningKey('k1', 'ES256'); // same kid, other key
    const forged = await new SignJWT({ sub: 'system:serviceaccount:foo:alice', aud: 'mesh-ca', iss: jwks.url('') })
      .setProtectedHeader({ alg: 'ES256', kid: 'k1' })
      .setExpirationTime('5m')
      .sign(impostor.privateKey);
    const forgedError = await failure(createCertificate(client(), { csr: csr.csrPem }, bearer(forged)));
    expect(forgedError.code).to.equal(grpc.status.UNAUTHENTICATED);
    expect(forgedError.details).to.match(/signature does not verify/);
  });

  it('a CSR that does not parse: INVALID_ARGUMENT, counted as a parsing error only', async () => {
    const jwt = await token({ sub: 'system:serviceaccount:foo:alice', aud: 'mesh-ca' });
    let error: grpc.ServiceError | undefined;
    const moved = await metricsMovedBy(async () => {
      error = await failure(createCertificate(client(), { csr: '-----BEGIN CERTIFICATE REQUEST-----\ngarbage\n-----END CERTIFICATE REQUEST-----' }, bearer(jwt)));
    });
    expect(error!.code).to.equal(grpc.status.INVALID_ARGUMENT);
    expect(error!.details).to.match(/invalid CSR: the CSR does not parse/);
    expect(moved).to.deep.equal({ ca_server_csr_count: 1, ca_server_csr_parsing_err_count: 1 });
  });

  it('a token whose sub is not a service account: UNAUTHENTICATED, counted as an ID extraction error only', async () => {
    const jwt = await token({ sub: 'user@example.com', aud: 'mesh-ca' });
    let error: grpc.ServiceError | undefined;
    const moved = await metricsMovedBy(async () => {
      error = await failure(createCertificate(client(), { csr: csr.csrPem }, bearer(jwt)));
    });
    expect(error!.code).to.equal(grpc.status.UNAUTHENTICATED);
    expect(error!.details).to.match(/"sub" "user@example.com"; expected system:serviceaccount:<namespace>:<service account>/);
    expect(moved).to.deep.equal({ ca_server_csr_count: 1, ca_server_id_extraction_err_count: 1 });
  });

  it('no credential at all: UNAUTHENTICATED', async () => {
    const error = await failure(createCertificate(client(), { csr: csr.csrPem }));
    expect(error.code).to.equal(grpc.status.UNAUTHENTICATED);
    expect(error.details).to.match(/no credential/);
  });

  it('a signing failure (the root expired by the CA clock): INTERNAL, counted as a signing error only', async () => {
    const jwt = await token({ sub: 'system:serviceaccount:foo:alice', aud: 'mesh-ca' });
    let error: grpc.ServiceError | undefined;
    caNow = ca.rootExpiry().getTime() + 1000;
    try {
      const moved = await metricsMovedBy(async () => {
        error = await failure(createCertificate(client(), { csr: csr.csrPem }, bearer(jwt)));
      });
      expect(moved).to.deep.equal({ ca_server_csr_count: 1, ca_server_csr_sign_err_count: 1 });
    } finally {
      caNow = undefined;
    }
    expect(error!.code).to.equal(grpc.status.INTERNAL);
    expect(error!.details).to.match(/signing failed: the CA's signing chain expired/);
  });

  it('renews with the client certificate it issued, for the same identity and no token', async () => {
    const jwt = await token({ sub: 'system:serviceaccount:foo:alice', aud: 'mesh-ca' });
    const first = await createCertificate(client(), { csr: csr.csrPem }, bearer(jwt));
    const next = await makeCsr({ kind: 'rsa', bits: 2048 });
    const renewed = await createCertificate(client({ keyPem: csr.keyPem, certChain: first }), { csr: next.csrPem });
    expect(new X509Certificate(renewed[0]).subjectAltName).to.equal(`URI:${ALICE}`);
    expect(await opensslVerify(renewed, ca.rootCertificates())).to.match(/: OK$/);
  });

  it('a client certificate from another CA is no credential', async () => {
    const foreign = await MeshCertificateAuthority.create(testCaOptions());
    const foreignKey = await makeCsr();
    const { certChain } = await foreign.sign({ csrPem: foreignKey.csrPem, identities: [ALICE], ttlSeconds: 0 });
    const error = await failure(createCertificate(client({ keyPem: foreignKey.keyPem, certChain }), { csr: csr.csrPem }));
    expect(error.code).to.equal(grpc.status.UNAUTHENTICATED);
  });

  it('a trusted node account gets the certificate of a workload on its node, by metadata or request field', async () => {
    const nodeAgent = await token({ sub: 'system:serviceaccount:mesh-system:node-agent', aud: 'mesh-ca', 'kubernetes.io': { node: { name: 'node-1' } } });
    const chain = await createCertificate(client(), { csr: csr.csrPem }, { ...bearer(nodeAgent), [IMPERSONATED_IDENTITY_METADATA]: BOB });
    expect(new X509Certificate(chain[0]).subjectAltName).to.equal(`URI:${BOB}`);
    const viaField = await createCertificate(client(), { csr: csr.csrPem, metadata: { fields: { ImpersonatedIdentity: { stringValue: BOB } } } }, bearer(nodeAgent));
    expect(new X509Certificate(viaField[0]).subjectAltName).to.equal(`URI:${BOB}`);
  });

  it('impersonation is refused with PERMISSION_DENIED: a workload not on the node, a caller that is no node account, a token without a node', async () => {
    const nodeAgent = await token({ sub: 'system:serviceaccount:mesh-system:node-agent', aud: 'mesh-ca', 'kubernetes.io': { node: { name: 'node-1' } } });
    let error: grpc.ServiceError | undefined;
    const moved = await metricsMovedBy(async () => {
      error = await failure(createCertificate(client(), { csr: csr.csrPem }, { ...bearer(nodeAgent), [IMPERSONATED_IDENTITY_METADATA]: CAROL }));
    });
    expect(error!.code).to.equal(grpc.status.PERMISSION_DENIED);
    expect(error!.details).to.match(/no workload with that identity runs on node node-1/);
    expect(moved).to.deep.equal({ ca_server_csr_count: 1, ca_server_authentication_failure_count: 1 });

    const workload = await token({ sub: 'system:serviceaccount:foo:alice', aud: 'mesh-ca', 'kubernetes.io': { node: { name: 'node-1' } } });
    const notTrusted = await failure(createCertificate(client(), { csr: csr.csrPem }, { ...bearer(workload), [IMPERSONATED_IDENTITY_METADATA]: BOB }));
    expect(notTrusted.code).to.equal(grpc.status.PERMISSION_DENIED);
    expect(notTrusted.details).to.match(/only the node accounts of CA_TRUSTED_NODE_ACCOUNTS may impersonate/);

    const nodeless = await token({ sub: 'system:serviceaccount:mesh-system:node-agent', aud: 'mesh-ca' });
    const noNode = await failure(createCertificate(client(), { csr: csr.csrPem }, { ...bearer(nodeless), [IMPERSONATED_IDENTITY_METADATA]: BOB }));
    expect(noNode.code).to.equal(grpc.status.PERMISSION_DENIED);
    expect(noNode.details).to.match(/names no node/);
  });

  it('reports the root and chain expiry gauges from the current CA', async () => {
    const values = await metricValues(registry);
    const expiry = ca.rootExpiry().getTime();
    expect(values.ca_server_root_cert_expiry_timestamp).to.equal(expiry / 1000);
    expect(values.ca_server_cert_chain_expiry_timestamp).to.equal(ca.certChainExpiry().getTime() / 1000);
    expect(values.ca_server_root_cert_expiry_seconds).to.be.closeTo((expiry - Date.now()) / 1000, 5);
    expect(values.ca_server_cert_chain_expiry_seconds).to.be.greaterThan(0);
  });
});
