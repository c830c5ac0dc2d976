import { expect } from 'chai';
import * as grpc from '@grpc/grpc-js';
import { SignJWT } from 'jose';
import * as http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { PeerCertificate } from 'node:tls';
import {
  AuthenticationError,
  authenticateCall,
  Authenticator,
  caOptionsFrom,
  Certificate,
  ClientCertAuthenticator,
  IdentityExtractionError,
  JwtAuthenticator,
  MeshCertificateAuthority,
  NodeAuthorizer,
  parseJwtRule,
  PermissionDeniedError,
} from '../../../../src/modules/security/ca';
import { Settings } from '../../../../src/modules/settings';
import { closedPort, JwksServer, jwksOf, newSigningKey, SigningKey } from '../authn-jwks-server';
import { makeCsr, makeOperatorCa, testCaOptions, writeDir } from './helpers';

const ALICE = 'spiffe://cluster.local/ns/foo/sa/alice';
const ISSUER = 'https://issuer.example';

function callWith(headers: Record<string, string>, peer?: Buffer) {
  const metadata = new grpc.Metadata();
  for (const [name, value] of Object.entries(headers)) metadata.set(name, value);
  return { metadata, getAuthContext: () => (peer ? { sslPeerCertificate: { raw: peer } as PeerCertificate } : {}) };
}

async function sign(key: SigningKey, claims: Record<string, unknown>, expiresIn = '5m'): Promise<string> {
  return new SignJWT(claims).setProtectedHeader({ alg: key.jwk.alg!, kid: key.kid }).setIssuedAt().setExpirationTime(expiresIn).sign(key.privateKey);
}

async function rejection(promise: Promise<unknown>): Promise<Error> {
  try {
    await promise;
  } catch (err) {
    return err as Error;
  }
  return expect.fail('expected a rejection') as never;
}

describe('CA authentication: bearer JWT', function () {
  this.timeout(30_000);
  let key: SigningKey;

  before(async () => {
    key = await newSigningKey('rule-key', 'RS256');
  });

  it('JWT_RULE with an inline key set: the token must match TOKEN_AUDIENCES and the rule audiences', async () => {
    const rule = parseJwtRule(JSON.stringify({ issuer: ISSUER, jwks: jwksOf(key), audiences: ['rule-aud'] }));
    const authenticator = new JwtAuthenticator({ trustDomain: 'example.org', audiences: ['mesh-ca'], keys: { kind: 'jwt-rule', rule } });
    const good = await sign(key, { iss: ISSUER, sub: 'system:serviceaccount:foo:alice', aud: ['mesh-ca', 'rule-aud'], 'kubernetes.io': { node: { name: 'n1' } } });
    const caller = await authenticator.authenticate(callWith({ authorization: `Bearer ${good}` }));
    expect(caller).to.deep.equal({ identities: ['spiffe://example.org/ns/foo/sa/alice'], authenticator: 'bearer JWT', nodeName: 'n1' });

    const onlyMesh = await sign(key, { iss: ISSUER, sub: 'system:serviceaccount:foo:alice', aud: 'mesh-ca' });
    const err = await rejection(authenticator.authenticate(callWith({ authorization: `Bearer ${onlyMesh}` })));
    expect(err).to.be.instanceOf(AuthenticationError);
    expect(err.message).to.match(/matches none of JWT_RULE's audiences \(rule-aud\)/);

    const onlyRule = await sign(key, { iss: ISSUER, sub: 'system:serviceaccount:foo:alice', aud: 'rule-aud' });
    expect((await rejection(authenticator.authenticate(callWith({ authorization: `Bearer ${onlyRule}` })))).message).to.match(/TOKEN_AUDIENCES: mesh-ca/);
  });

  it('JWT_RULE with a jwksUri fetched from a real key server', async () => {
    const server = await JwksServer.start(jwksOf(key));
    try {
      const rule = parseJwtRule(JSON.stringify({ issuer: ISSUER, jwksUri: server.url() }));
      const authenticator = new JwtAuthenticator({ trustDomain: 'cluster.local', audiences: ['mesh-ca'], keys: { kind: 'jwt-rule', rule } });
      const jwt = await sign(key, { iss: ISSUER, sub: 'system:serviceaccount:foo:alice', aud: 'mesh-ca' });
      expect((await authenticator.authenticate(callWith({ authorization: `Bearer ${jwt}` })))!.identities).to.deep.equal([ALICE]);
      expect(server.hits).to.equal(1);
    } finally {
      await server.stop();
    }
  });

  it('steps aside without an authorization header; says what is wrong with other ones', async () => {
    const unconfigured = new JwtAuthenticator({ trustDomain: 'cluster.local', audiences: ['mesh-ca'] });
    expect(await unconfigured.authenticate(callWith({}))).to.equal(undefined);
    expect((await rejection(unconfigured.authenticate(callWith({ authorization: 'Bearer abc' })))).message).to.match(/neither TOKEN_ISSUER nor JWT_RULE is set/);
    expect((await rejection(unconfigured.authenticate(callWith({ authorization: 'Basic abc' })))).message).to.match(/not "Bearer <token>"/);
    const rule = parseJwtRule(JSON.stringify({ issuer: ISSUER, jwks: jwksOf(key) }));
    const configured = new JwtAuthenticator({ trustDomain: 'cluster.local', audiences: ['mesh-ca'], keys: { kind: 'jwt-rule', rule } });
    expect((await rejection(configured.authenticate(callWith({ authorization: 'Bearer not.a.jwt' })))).message).to.match(/malformed/);
  });

  it('TOKEN_ISSUER: a discovery document that cannot be fetched, or is for another issuer, is a clear error', async () => {
    const down = `http://127.0.0.1:${await closedPort()}`;
    const unreachable = new JwtAuthenticator({ trustDomain: 'cluster.local', audiences: ['mesh-ca'], keys: { kind: 'oidc', issuer: down } });
    const jwt = await sign(key, { iss: down, sub: 'system:serviceaccount:foo:alice', aud: 'mesh-ca' });
    const err = await rejection(unreachable.authenticate(callWith({ authorization: `Bearer ${jwt}` })));
    expect(err).to.be.instanceOf(AuthenticationError);
    expect(err.message).to.contain(`cannot discover the keys of TOKEN_ISSUER ${down} from ${down}/.well-known/openid-configuration`);

    // A discovery document (served by a real HTTP server) that names another issuer.
    const discovery = http.createServer((_req, res) => res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ issuer: 'https://someone-else.example', jwks_uri: 'https://someone-else.example/jwks' })));
    await new Promise<void>((resolve) => discovery.listen(0, '127.0.0.1', resolve));
    try {
      const claimed = `http://127.0.0.1:${(discovery.address() as AddressInfo).port}`;
      const mismatched = new JwtAuthenticator({ trustDomain: 'cluster.local', audiences: ['mesh-ca'], keys: { kind: 'oidc', issuer: claimed } });
      const token = await sign(key, { iss: claimed, sub: 'system:serviceaccount:foo:alice', aud: 'mesh-ca' });
      expect((await rejection(mismatched.authenticate(callWith({ authorization: `Bearer ${token}` })))).message).to.contain(`it is for issuer "https://someone-else.example", not ${claimed}`);
    } finally {
      await new Promise<void>((resolve) => discovery.close(() => resolve()));
    }
  });

  it('parseJwtRule names JWT_RULE in every error', () => {
    const cases: [string, RegExp][] = [
      ['{', /^JWT_RULE is not valid JSON/],
      ['[]', /^JWT_RULE must be a JSON object/],
      ['{"jwksUri": "https://x"}', /^JWT_RULE: "issuer" must be a non-empty string/],
      ['{"issuer": "i"}', /^JWT_RULE: give "jwksUri" .* or "jwks"/],
      ['{"issuer": "i", "jwksUri": "ftp://x"}', /^JWT_RULE: "jwksUri" "ftp:\/\/x" is not an http\(s\) URL/],
      ['{"issuer": "i", "jwks": "{}"}', /^JWT_RULE: "jwks" must be a JWKS document/],
      ['{"issuer": "i", "jwksUri": "https://x", "audiences": "a"}', /^JWT_RULE: "audiences" must be a list/],
      ['{"issuer": "i", "jwksUri": "https://x", "audience": ["a"]}', /^JWT_RULE: unknown field\(s\) audience/],
    ];
    for (const [text, message] of cases) expect(() => parseJwtRule(text), text).to.throw(message);
  });
});

describe('CA authentication: client certificates, node authorization, the chain of authenticators', function () {
  this.timeout(30_000);

  it('verifies a client certificate through the plugged-in intermediate to the root; refuses expired and foreign ones', async () => {
    const operator = await makeOperatorCa();
    const now = { value: Date.now() };
    const ca = await MeshCertificateAuthority.create(
      testCaOptions({
        rootCaDir: writeDir({ 'ca-cert.pem': operator.intermediatePem, 'ca-key.pem': operator.intermediateKeyPem, 'root-cert.pem': operator.rootPem }),
        now: () => now.value,
      }),
    );
    const csr = await makeCsr();
    const { certChain } = await ca.sign({ csrPem: csr.csrPem, identities: [ALICE], ttlSeconds: 3600 });
    const leaf = Certificate.fromPem(certChain[0], 'leaf');
    const authenticator = new ClientCertAuthenticator(ca, () => now.value);
    expect(await authenticator.authenticate(callWith({}, leaf.der))).to.deep.equal({ identities: [ALICE], authenticator: 'client certificate' });
    expect(await authenticator.authenticate(callWith({}))).to.equal(undefined);

    now.value += 2 * 3600_000;
    expect((await rejection(authenticator.authenticate(callWith({}, leaf.der)))).message).to.match(/the client certificate expired at/);

    const foreign = await MeshCertificateAuthority.create(testCaOptions());
    const other = await foreign.sign({ csrPem: csr.csrPem, identities: [ALICE], ttlSeconds: 0 });
    const foreignLeaf = Certificate.fromPem(other.certChain[0], 'foreign leaf');
    const fresh = new ClientCertAuthenticator(ca);
    expect((await rejection(fresh.authenticate(callWith({}, foreignLeaf.der))))).to.be.instanceOf(AuthenticationError);
    expect((await rejection(fresh.authenticate(callWith({}, foreignLeaf.der)))).message).to.match(/not issued by the mesh CA/);

    const dnsOnly = await ca.issueServerCertificate(['meshd.mesh-system.svc'], 3600_000);
    const dnsLeaf = Certificate.fromPem(dnsOnly.certChainPem.split(/(?<=-----END CERTIFICATE-----\n)/)[0], 'server leaf');
    expect(await rejection(authenticator.authenticate(callWith({}, dnsLeaf.der)))).to.be.instanceOf(IdentityExtractionError);
  });

  it('node authorization: own identity always; another only for a trusted node account with that workload on its node', () => {
    const authorizer = new NodeAuthorizer({
      trustDomain: 'cluster.local',
      trustedNodeAccounts: [{ namespace: 'mesh-system', serviceAccount: 'node-agent' }],
      identitiesOnNode: (node) => new Set(node === 'n1' ? [ALICE] : []),
    });
    const agent = { identities: ['spiffe://cluster.local/ns/mesh-system/sa/node-agent'], authenticator: 'bearer JWT', nodeName: 'n1' };
    expect(authorizer.authorize(agent, ALICE)).to.deep.equal([ALICE]);
    expect(() => authorizer.authorize({ ...agent, nodeName: 'n2' }, ALICE)).to.throw(PermissionDeniedError, /no workload with that identity runs on node n2/);
    const otherDomain = { ...agent, identities: ['spiffe://evil.example/ns/mesh-system/sa/node-agent'] };
    expect(() => authorizer.authorize(otherDomain, ALICE)).to.throw(PermissionDeniedError, /only the node accounts/);
    const alice = { identities: [ALICE], authenticator: 'client certificate' };
    expect(authorizer.authorize(alice, ALICE)).to.deep.equal([ALICE]);
  });

  it('the first authenticator that recognizes the caller wins; ID extraction errors stay apart', async () => {
    const failing = (name: string, err: Error): Authenticator => ({ name, authenticate: () => Promise.reject(err) });
    const recognizing: Authenticator = { name: 'ok', authenticate: async () => ({ identities: [ALICE], authenticator: 'ok' }) };
    const stepsAside: Authenticator = { name: 'absent', authenticate: async () => undefined };
    const call = callWith({});
    expect((await authenticateCall([failing('a', new AuthenticationError('bad')), recognizing], call)).identities).to.deep.equal([ALICE]);
    expect(await rejection(authenticateCall([failing('a', new IdentityExtractionError('no sub')), stepsAside], call))).to.be.instanceOf(IdentityExtractionError);
    const mixed = await rejection(authenticateCall([failing('a', new IdentityExtractionError('no sub')), failing('b', new AuthenticationError('expired'))], call));
    expect(mixed).to.be.instanceOf(AuthenticationError).and.not.instanceOf(IdentityExtractionError);
    expect(mixed.message).to.equal('no sub; expired');
    expect((await rejection(authenticateCall([stepsAside], call))).message).to.match(/no credential.*\(absent\)/);
  });
});

describe('CA settings: caOptionsFrom', () => {
  const settings = (env: Record<string, string>) => new Settings('pilot-discovery', env);

  it('reads the spec defaults', () => {
    const options = caOptionsFrom(settings({}));
    expect(options.authority.trustDomain).to.equal('cluster.local');
    expect(options.authority.rootCaDir).to.equal('./etc/cacerts');
    expect(options.authority.selfSigned).to.deep.equal({ rsaKeySize: 2048, ttlMs: 87600 * 3600_000 });
    expect(options.authority.workloadCertTtl).to.deep.equal({ defaultMs: 24 * 3600_000, maxMs: 2160 * 3600_000 });
    expect(options.authority.rotation).to.deep.equal({ checkIntervalMs: 3600_000, gracePeriodPercentile: 20, jitter: true });
    expect(options.authentication.audiences).to.deep.equal(['mesh-ca']);
    expect(options.authentication.keys).to.equal(undefined);
    expect(options.nodeAuthorization.trustedNodeAccounts).to.deep.equal([]);
  });

  it('reads what is set: TOKEN_ISSUER wins over JWT_RULE; node accounts; overrides', () => {
    const options = caOptionsFrom(
      settings({
        TOKEN_ISSUER: 'https://issuer.example',
        JWT_RULE: '{"issuer": "x", "jwksUri": "https://x/jwks"}',
        TOKEN_AUDIENCES: ' a, b ,',
        CA_TRUSTED_NODE_ACCOUNTS: 'mesh-system/ztunnel, kube-system/agent',
        DEFAULT_WORKLOAD_CERT_TTL: '1h',
        CA_SELF_SIGNED_ROOT_CERT_CHECK_INTERVAL: '0s',
      }),
      { trustDomain: 'example.org', persistDir: '/var/lib/mesh' },
    );
    expect(options.authentication.keys).to.deep.equal({ kind: 'oidc', issuer: 'https://issuer.example' });
    expect(options.authentication.audiences).to.deep.equal(['a', 'b']);
    expect(options.nodeAuthorization.trustedNodeAccounts).to.deep.equal([
      { namespace: 'mesh-system', serviceAccount: 'ztunnel' },
      { namespace: 'kube-system', serviceAccount: 'agent' },
    ]);
    expect(options.authority.trustDomain).to.equal('example.org');
    expect(options.authority.persistDir).to.equal('/var/lib/mesh');
    expect(options.authority.workloadCertTtl.defaultMs).to.equal(3600_000);
    expect(options.authority.rotation.checkIntervalMs).to.equal(0);
    const rule = caOptionsFrom(settings({ JWT_RULE: '{"issuer": "x", "jwksUri": "https://x/jwks"}' })).authentication.keys;
    expect(rule).to.deep.equal({ kind: 'jwt-rule', rule: { issuer: 'x', jwksUri: 'https://x/jwks', jwks: undefined, audiences: undefined } });
  });

  it('names the setting whose value the CA cannot use', () => {
    const cases: [Record<string, string>, RegExp][] = [
      [{ CA_SELF_SIGNED_CA_RSA_KEY_SIZE: '1024' }, /^CA_SELF_SIGNED_CA_RSA_KEY_SIZE must be a multiple of 8 from 2048 to 8192, got 1024/],
      [{ DEFAULT_WORKLOAD_CERT_TTL: '0s' }, /^DEFAULT_WORKLOAD_CERT_TTL must be positive/],
      [{ MAX_WORKLOAD_CERT_TTL: '-1h' }, /^MAX_WORKLOAD_CERT_TTL must be positive/],
      [{ CA_SELF_SIGNED_CA_CERT_TTL: '0s' }, /^CA_SELF_SIGNED_CA_CERT_TTL must be positive/],
      [{ CA_SELF_SIGNED_ROOT_CERT_GRACE_PERIOD_PERCENTILE: '150' }, /^CA_SELF_SIGNED_ROOT_CERT_GRACE_PERIOD_PERCENTILE must be from 0 to 100/],
      [{ TOKEN_AUDIENCES: ' , ' }, /^TOKEN_AUDIENCES is empty/],
      [{ TOKEN_ISSUER: 'issuer.example' }, /^TOKEN_ISSUER "issuer.example" is not an http\(s\) URL/],
      [{ JWT_RULE: '{' }, /^JWT_RULE is not valid JSON/],
      [{ CA_TRUSTED_NODE_ACCOUNTS: 'mesh-system' }, /^CA_TRUSTED_NODE_ACCOUNTS: "mesh-system" is not <namespace>\/<service account>/],
    ];
    for (const [env, message] of cases) expect(() => caOptionsFrom(settings(env)), JSON.stringify(env)).to.throw(message);
  });
});
