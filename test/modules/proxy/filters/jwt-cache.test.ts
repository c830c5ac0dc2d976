import { expect } from 'chai';
import { JWT_AUTHN_TYPE_URL, jwtAuthnFilterFactory } from '../../../../src/modules/proxy/filters';
import type { HttpFilter } from '../../../../src/modules/proxy/http/filter-api';
import { decoded, jwks, JwksServer, request, Respond, sign, SigningKey, signingKey, TestContext } from './support';

const ISSUER = 'https://issuer.example.com';
const OTHER_ISSUER = 'https://other.example.com';

/**
 * The proxy remembers tokens it has parsed and signatures it has verified (per key set); the
 * same token bytes sent again must still meet every check as of now, against the keys and
 * providers in force now.
 */
describe('jwt_authn remembered tokens (parse and signature caches)', () => {
  let key: SigningKey;
  let sameKidOtherKey: SigningKey;
  let server: JwksServer;
  let context: TestContext;
  const filters: HttpFilter[] = [];

  before(async () => {
    // Two different RSA keys published under the same kid: only the signature tells them apart.
    [key, sameKidOtherKey] = await Promise.all([signingKey('RS256', 'k1'), signingKey('RS256', 'k1')]);
  });
  beforeEach(async () => {
    context = new TestContext();
    server = await new JwksServer().start();
    server.body = jwks(key);
  });
  afterEach(async () => {
    for (const f of filters.splice(0)) f.close?.();
    await server.stop();
  });

  function filterFor(provider: Record<string, unknown>): HttpFilter {
    const config = decoded(JWT_AUTHN_TYPE_URL, {
      providers: { p: { issuer: ISSUER, remote_jwks: { http_uri: { uri: server.url, cluster: 'jwks', timeout: { seconds: 2 } }, cache_duration: { seconds: 300 } }, ...provider } },
      rules: [{ match: { prefix: '/' }, requires: { provider_name: 'p' } }],
    });
    const filter = jwtAuthnFilterFactory.create('jwt', config, context);
    filters.push(filter);
    return filter;
  }
  const call = async (filter: HttpFilter, token: string): Promise<string> => {
    const outcome = await filter.onRequest(request({ headers: { authorization: `Bearer ${token}` } }));
    return outcome.kind === 'continue' ? 'continue' : `${(outcome as Respond).status} ${(outcome as Respond).body}`;
  };

  it('rejects a remembered token once it has expired (clock skew included)', async () => {
    const filter = filterFor({ clock_skew_seconds: 5 });
    const token = await sign(key, { iss: ISSUER, sub: 's', exp: context.nowSeconds + 60 });
    expect(await call(filter, token)).to.equal('continue');
    expect(await call(filter, token), 'remembered').to.equal('continue');
    context.advanceSeconds(65);
    expect(await call(filter, token), 'exp + skew is still good').to.equal('continue');
    context.advanceSeconds(1);
    expect(await call(filter, token)).to.equal('401 Jwt is expired');
    expect(await call(filter, token), 'and stays rejected').to.equal('401 Jwt is expired');
  });

  it('checks a remembered token against the rotated key set, even under the same kid', async () => {
    const filter = filterFor({});
    const token = await sign(key, { iss: ISSUER, sub: 's', exp: context.nowSeconds + 3600 });
    expect(await call(filter, token)).to.equal('continue');
    server.body = jwks(sameKidOtherKey);
    context.advanceSeconds(301);
    expect(await call(filter, token), 'the old signature does not verify with the new key').to.equal('401 Jwt verification fails');
    expect(server.fetches).to.equal(2);
    const fresh = await sign(sameKidOtherKey, { iss: ISSUER, sub: 's', exp: context.nowSeconds + 3600 });
    expect(await call(filter, fresh)).to.equal('continue');
    server.body = jwks(key);
    context.advanceSeconds(301);
    expect(await call(filter, fresh), 'nor the reverse').to.equal('401 Jwt verification fails');
    expect(await call(filter, token), 'the first key is back').to.equal('continue');
  });

  it('does not let a token remembered by one provider pass another issuer or audience', async () => {
    const token = await sign(key, { iss: ISSUER, sub: 's', aud: 'orders', exp: context.nowSeconds + 3600 });
    expect(await call(filterFor({ audiences: ['orders'] }), token)).to.equal('continue');
    expect(await call(filterFor({ issuer: OTHER_ISSUER }), token)).to.equal('401 Jwt issuer is not configured');
    expect(await call(filterFor({ audiences: ['payments'] }), token)).to.equal('401 Audiences in Jwt are not allowed');
  });

  it('keeps what one request sees of a remembered token from changing the next', async () => {
    const filter = filterFor({ payload_in_metadata: 'claims' });
    const token = await sign(key, { iss: ISSUER, sub: 's', groups: ['dev'], exp: context.nowSeconds + 3600 });
    const first = request({ headers: { authorization: `Bearer ${token}` } });
    expect((await filter.onRequest(first)).kind).to.equal('continue');
    const claims = (first.metadata['envoy.filters.http.jwt_authn'] as Record<string, Record<string, unknown>>).claims;
    expect(() => ((claims.groups as string[])[0] = 'admins')).to.throw(TypeError);
    const second = request({ headers: { authorization: `Bearer ${token}` } });
    expect((await filter.onRequest(second)).kind).to.equal('continue');
    expect((second.metadata['envoy.filters.http.jwt_authn'] as Record<string, Record<string, unknown>>).claims.groups).to.deep.equal(['dev']);
  });
});
