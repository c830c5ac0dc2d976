import { expect } from 'chai';
import { decodeJwt, decodeProtectedHeader } from 'jose';
import { JWT_AUTHN_METADATA, JWT_AUTHN_TYPE_URL, jwtAuthnFilterFactory } from '../../../../src/modules/proxy/filters';
import type { FilterOutcome, HttpFilter } from '../../../../src/modules/proxy/http/filter-api';
import { decoded, jwks, request, Respond, sign, SigningKey, signingKey, TestContext } from './support';

const ISSUER = 'https://issuer.example.com';

/** A jwt_authn filter whose single rule requires provider `p` everywhere. */
function filterFor(provider: Record<string, unknown>, context = new TestContext(), extra: Record<string, unknown> = {}): HttpFilter {
  const config = decoded(JWT_AUTHN_TYPE_URL, {
    providers: { p: provider },
    rules: [{ match: { prefix: '/' }, requires: { provider_name: 'p' } }],
    ...extra,
  });
  return jwtAuthnFilterFactory.create('envoy.filters.http.jwt_authn', config, context);
}

function rejected(outcome: FilterOutcome): Respond {
  expect(outcome.kind, 'outcome').to.equal('respond');
  return outcome as Respond;
}

function expectRejected(outcome: FilterOutcome, status: number, body: string): Respond {
  const reply = rejected(outcome);
  expect({ status: reply.status, body: reply.body }).to.deep.equal({ status, body });
  return reply;
}

describe('jwt_authn filter (local JWKS)', () => {
  let rsa: SigningKey;
  let es: SigningKey;
  let ed: SigningKey;
  let context: TestContext;
  let provider: Record<string, unknown>;
  const claims = (extra: Record<string, unknown> = {}) => ({
    iss: ISSUER,
    sub: 'alice',
    iat: context.nowSeconds,
    exp: context.nowSeconds + 3600,
    ...extra,
  });
  const bearer = (token: string) => ({ authorization: `Bearer ${token}` });

  before(async () => {
    [rsa, es, ed] = await Promise.all([signingKey('RS256', 'rsa-1'), signingKey('ES256', 'ec-1'), signingKey('EdDSA', 'ed-1')]);
  });

  beforeEach(() => {
    context = new TestContext();
    provider = { issuer: ISSUER, local_jwks: { inline_string: jwks(rsa, es, ed) }, payload_in_metadata: 'payload' };
  });

  for (const name of ['rsa', 'es', 'ed'] as const) {
    it(`accepts a valid ${name === 'rsa' ? 'RS256' : name === 'es' ? 'ES256' : 'EdDSA'} token and puts its payload in metadata`, async () => {
      const key = { rsa, es, ed }[name];
      const token = await sign(key, claims({ groups: ['dev'] }));
      const req = request({ headers: bearer(token) });
      expect(await filterFor(provider, context).onRequest(req)).to.deep.equal({ kind: 'continue' });
      expect(req.metadata[JWT_AUTHN_METADATA].payload).to.deep.equal(decodeJwt(token));
    });
  }

  it('verifies RS384, RS512, PS256, PS384, PS512 and ES384 tokens', async () => {
    const keys = await Promise.all(['RS384', 'RS512', 'PS256', 'PS384', 'PS512', 'ES384'].map((alg) => signingKey(alg, `k-${alg}`)));
    const filter = filterFor({ issuer: ISSUER, local_jwks: { inline_string: jwks(...keys) } }, context);
    for (const key of keys) {
      const outcome = await filter.onRequest(request({ headers: bearer(await sign(key, claims())) }));
      expect(outcome.kind, key.alg).to.equal('continue');
    }
  });

  it('removes the token header unless forward is set', async () => {
    const token = await sign(rsa, claims());
    const dropped = request({ headers: bearer(token) });
    await filterFor(provider, context).onRequest(dropped);
    expect(dropped.headers).to.not.have.property('authorization');

    const kept = request({ headers: bearer(token) });
    await filterFor({ ...provider, forward: true }, context).onRequest(kept);
    expect(kept.headers.authorization).to.equal(`Bearer ${token}`);
  });

  it('answers a missing token with 401 "Jwt is missing" and a bare Bearer challenge', async () => {
    const reply = expectRejected(await filterFor(provider, context).onRequest(request({ path: '/items?page=2' })), 401, 'Jwt is missing');
    expect(reply.headers?.['www-authenticate']).to.equal('Bearer realm="http://example.com/items?page=2"');
  });

  it('answers a token signed by another key with 401 "Jwt verification fails" and error="invalid_token"', async () => {
    const impostor = await signingKey('RS256', 'rsa-1');
    const reply = expectRejected(
      await filterFor(provider, context).onRequest(request({ path: '/x', headers: bearer(await sign(impostor, claims())) })),
      401,
      'Jwt verification fails',
    );
    expect(reply.headers?.['www-authenticate']).to.equal('Bearer realm="http://example.com/x", error="invalid_token"');
  });

  it('rejects a token whose payload was altered after signing', async () => {
    const [h, , s] = (await sign(rsa, claims())).split('.');
    const forged = `${h}.${Buffer.from(JSON.stringify(claims({ sub: 'admin' }))).toString('base64url')}.${s}`;
    expectRejected(await filterFor(provider, context).onRequest(request({ headers: bearer(forged) })), 401, 'Jwt verification fails');
  });

  it('rejects a kid the key set does not have', async () => {
    const token = await sign(rsa, claims(), { kid: 'rotated-away' });
    expectRejected(await filterFor(provider, context).onRequest(request({ headers: bearer(token) })), 401, "Jwks doesn't have key to match kid or alg from Jwt");
  });

  it('tries every key when the token has no kid', async () => {
    const token = await sign(es, claims(), { kid: undefined });
    expect(decodeProtectedHeader(token)).to.not.have.property('kid');
    expect((await filterFor(provider, context).onRequest(request({ headers: bearer(token) }))).kind).to.equal('continue');
  });

  it('rejects a malformed token with Envoy\'s reason', async () => {
    expectRejected(
      await filterFor(provider, context).onRequest(request({ headers: bearer('not-a-jwt') })),
      401,
      'Jwt is not in the form of Header.Payload.Signature with two dots and 3 sections',
    );
  });

  describe('time constraints (clock skew 60s by default)', () => {
    it('accepts a token expired less than the skew ago and rejects one expired longer ago', async () => {
      const filter = filterFor(provider, context);
      const recent = await sign(rsa, claims({ exp: context.nowSeconds - 30 }));
      expect((await filter.onRequest(request({ headers: bearer(recent) }))).kind).to.equal('continue');
      const old = await sign(rsa, claims({ exp: context.nowSeconds - 61 }));
      expectRejected(await filter.onRequest(request({ headers: bearer(old) })), 401, 'Jwt is expired');
    });

    it('accepts nbf within the skew and rejects nbf beyond it', async () => {
      const filter = filterFor(provider, context);
      const soon = await sign(rsa, claims({ nbf: context.nowSeconds + 30 }));
      expect((await filter.onRequest(request({ headers: bearer(soon) }))).kind).to.equal('continue');
      const later = await sign(rsa, claims({ nbf: context.nowSeconds + 120 }));
      expectRejected(await filter.onRequest(request({ headers: bearer(later) })), 401, 'Jwt not yet valid');
    });

    it('follows clock_skew_seconds and the filter clock', async () => {
      const filter = filterFor({ ...provider, clock_skew_seconds: 10 }, context);
      const token = await sign(rsa, claims({ exp: context.nowSeconds - 30 }));
      expectRejected(await filter.onRequest(request({ headers: bearer(token) })), 401, 'Jwt is expired');
      const fresh = await sign(rsa, claims({ exp: context.nowSeconds + 5 }));
      expect((await filter.onRequest(request({ headers: bearer(fresh) }))).kind).to.equal('continue');
      context.advanceSeconds(16);
      expectRejected(await filter.onRequest(request({ headers: bearer(fresh) })), 401, 'Jwt is expired');
    });
  });

  it('rejects a token of another issuer', async () => {
    const token = await sign(rsa, claims({ iss: 'https://evil.example.com' }));
    expectRejected(await filterFor(provider, context).onRequest(request({ headers: bearer(token) })), 401, 'Jwt issuer is not configured');
  });

  it('answers a disallowed audience with 401 (Envoy says 403; our contract says every invalid token is 401), and accepts a configured one (scheme and trailing slash ignored)', async () => {
    const filter = filterFor({ ...provider, audiences: ['https://api.example.com/', 'other'] }, context);
    const wrong = await sign(rsa, claims({ aud: 'https://elsewhere.example.com' }));
    const reply = expectRejected(await filter.onRequest(request({ headers: bearer(wrong) })), 401, 'Audiences in Jwt are not allowed');
    expect(reply.headers?.['www-authenticate']).to.match(/error="invalid_token"$/);
    const none = await sign(rsa, claims());
    expectRejected(await filter.onRequest(request({ headers: bearer(none) })), 401, 'Audiences in Jwt are not allowed');
    const right = await sign(rsa, claims({ aud: ['x', 'http://api.example.com'] }));
    expect((await filter.onRequest(request({ headers: bearer(right) }))).kind).to.equal('continue');
  });

  describe('token locations', () => {
    it('reads from_headers after value_prefix, and only there', async () => {
      const filter = filterFor({ ...provider, from_headers: [{ name: 'X-Jwt-Assertion', value_prefix: 'Token ' }] }, context);
      const token = await sign(rsa, claims());
      const req = request({ headers: { 'x-jwt-assertion': `Token ${token}` } });
      expect((await filter.onRequest(req)).kind).to.equal('continue');
      expect(req.headers).to.not.have.property('x-jwt-assertion');
      expectRejected(await filter.onRequest(request({ headers: { 'x-jwt-assertion': token } })), 401, 'Jwt is missing');
      expectRejected(await filter.onRequest(request({ headers: bearer(token) })), 401, 'Jwt is missing');
    });

    it('reads a header with no prefix as the whole value', async () => {
      const filter = filterFor({ ...provider, from_headers: [{ name: 'x-token' }], forward: true }, context);
      expect((await filter.onRequest(request({ headers: { 'x-token': await sign(rsa, claims()) } }))).kind).to.equal('continue');
    });

    it('reads from_params (query string, percent-decoded)', async () => {
      const filter = filterFor({ ...provider, from_params: ['jwt'] }, context);
      const token = await sign(rsa, claims());
      expect((await filter.onRequest(request({ path: `/a?x=1&jwt=${encodeURIComponent(token)}` }))).kind).to.equal('continue');
      expectRejected(await filter.onRequest(request({ path: '/a', headers: bearer(token) })), 401, 'Jwt is missing');
    });

    it('reads from_cookies', async () => {
      const filter = filterFor({ ...provider, from_cookies: ['session'] }, context);
      const token = await sign(rsa, claims());
      expect((await filter.onRequest(request({ headers: { cookie: `theme=dark; session=${token}; x=y` } }))).kind).to.equal('continue');
      expectRejected(await filter.onRequest(request({ headers: { cookie: 'theme=dark' } })), 401, 'Jwt is missing');
    });

    it('uses Authorization: Bearer and ?access_token= when no location is configured', async () => {
      const filter = filterFor(provider, context);
      const token = await sign(rsa, claims());
      expect((await filter.onRequest(request({ path: `/?access_token=${token}` }))).kind).to.equal('continue');
      expectRejected(await filter.onRequest(request({ headers: { authorization: `Basic ${token}` } })), 401, 'Jwt is missing');
    });

    it('requires every token found to verify (a good header token does not carry a bad query token)', async () => {
      const filter = filterFor({ ...provider, forward: true }, context);
      const good = await sign(rsa, claims());
      const bad = await sign(await signingKey('RS256', 'rsa-1'), claims());
      expectRejected(await filter.onRequest(request({ path: `/?access_token=${bad}`, headers: bearer(good) })), 401, 'Jwt verification fails');
      expect((await filter.onRequest(request({ path: `/?access_token=${good}`, headers: bearer(good) }))).kind).to.equal('continue');
    });
  });

  it('forwards the payload base64url-encoded in forward_payload_header, replacing a client-sent one', async () => {
    const token = await sign(rsa, claims());
    const req = request({ headers: { ...bearer(token), 'x-jwt-payload': 'forged' } });
    await filterFor({ ...provider, forward_payload_header: 'x-jwt-payload' }, context).onRequest(req);
    expect(req.headers['x-jwt-payload']).to.equal(token.split('.')[1]);
    expect(JSON.parse(Buffer.from(req.headers['x-jwt-payload'], 'base64url').toString())).to.deep.equal(decodeJwt(token));
  });

  it('copies claims to headers (claim_to_headers): strings, numbers, nested and list claims', async () => {
    const token = await sign(rsa, claims({ tenant: 'acme', level: 3, org: { team: 'core' }, groups: ['a', 'b'] }));
    const req = request({ headers: { ...bearer(token), 'x-tenant': 'forged' } });
    const map = [
      { header_name: 'x-tenant', claim_name: 'tenant' },
      { header_name: 'x-level', claim_name: 'level' },
      { header_name: 'x-team', claim_name: 'org.team' },
      { header_name: 'x-groups', claim_name: 'groups' },
      { header_name: 'x-absent', claim_name: 'nope' },
    ];
    await filterFor({ ...provider, claim_to_headers: map }, context).onRequest(req);
    expect(req.headers).to.include({ 'x-tenant': 'acme', 'x-level': '3', 'x-team': 'core' });
    expect(JSON.parse(Buffer.from(req.headers['x-groups'], 'base64').toString())).to.deep.equal(['a', 'b']);
    expect(req.headers).to.not.have.property('x-absent');
  });

  it('keeps other filters\' metadata and normalizes space-delimited claims', async () => {
    const token = await sign(rsa, claims({ scope: 'read write' }));
    const req = request({ headers: bearer(token), metadata: { [JWT_AUTHN_METADATA]: { other: 1 }, 'x.filter': { k: 'v' } } });
    await filterFor({ ...provider, normalize_payload_in_metadata: { space_delimited_claims: ['scope'] } }, context).onRequest(req);
    expect(req.metadata['x.filter']).to.deep.equal({ k: 'v' });
    expect(req.metadata[JWT_AUTHN_METADATA].other).to.equal(1);
    expect((req.metadata[JWT_AUTHN_METADATA].payload as Record<string, unknown>).scope).to.deep.equal(['read', 'write']);
  });

  it('normalizes a remembered token per provider, the same on every request, and no request can change it', async () => {
    const token = await sign(rsa, claims({ scope: 'read write', roles: 'a b' }));
    const byScope = filterFor({ ...provider, normalize_payload_in_metadata: { space_delimited_claims: ['scope'] } }, context);
    const byRoles = filterFor({ ...provider, normalize_payload_in_metadata: { space_delimited_claims: ['roles'] } }, context);
    const payloadOf = async (filter: typeof byScope): Promise<Record<string, unknown>> => {
      const req = request({ headers: bearer(token) });
      await filter.onRequest(req);
      return req.metadata[JWT_AUTHN_METADATA].payload as Record<string, unknown>;
    };
    for (let i = 0; i < 2; i++) {
      expect(await payloadOf(byScope)).to.include({ roles: 'a b' }).and.to.deep.include({ scope: ['read', 'write'] });
      expect(await payloadOf(byRoles)).to.include({ scope: 'read write' }).and.to.deep.include({ roles: ['a', 'b'] });
    }
    const seen = await payloadOf(byScope);
    expect(() => (seen.scope as string[]).push('admin')).to.throw(TypeError);
    expect(await payloadOf(byScope)).to.deep.include({ scope: ['read', 'write'] });
  });

  it('reads local_jwks from inline_bytes and from a file', async () => {
    const fs = await import('node:fs');
    const os = await import('node:os');
    const path = await import('node:path');
    const file = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'jwks-')), 'jwks.json');
    fs.writeFileSync(file, jwks(rsa));
    const token = await sign(rsa, claims());
    for (const local_jwks of [{ inline_bytes: Buffer.from(jwks(rsa)) }, { filename: file }]) {
      const outcome = await filterFor({ issuer: ISSUER, local_jwks }, context).onRequest(request({ headers: bearer(token) }));
      expect(outcome.kind, Object.keys(local_jwks)[0]).to.equal('continue');
    }
  });

  it('fails every token of a provider whose inline key set is unusable, and says so in the log', async () => {
    const filter = filterFor({ issuer: ISSUER, local_jwks: { inline_string: '{"keys": "nope"}' } }, context);
    expect(context.logs.join('\n')).to.match(/invalid local_jwks.*\[keys\] in Jwks is not an array/);
    expectRejected(await filter.onRequest(request({ headers: bearer(await sign(rsa, claims())) })), 401, "Jwks doesn't have any valid public key");
  });

  it('answers with the status code alone when strip_failure_response is set', async () => {
    const outcome = await filterFor(provider, context, { strip_failure_response: true }).onRequest(request({ headers: bearer('a.b.c') }));
    expect(outcome).to.deep.equal({ kind: 'respond', status: 401, body: '' });
  });

  it('lets CORS preflights through when bypass_cors_preflight is set', async () => {
    const preflight = request({ method: 'OPTIONS', headers: { origin: 'https://app.example.com', 'access-control-request-method': 'POST' } });
    expect((await filterFor(provider, context, { bypass_cors_preflight: true }).onRequest(preflight)).kind).to.equal('continue');
    expect((await filterFor(provider, context).onRequest(preflight)).kind).to.equal('respond');
  });
});
