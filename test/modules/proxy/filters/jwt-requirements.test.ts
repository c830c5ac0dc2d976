import { expect } from 'chai';
import { FilterConfigError, JWT_AUTHN_METADATA, JWT_AUTHN_TYPE_URL, jwtAuthnFilterFactory } from '../../../../src/modules/proxy/filters';
import type { FilterOutcome, HttpFilter } from '../../../../src/modules/proxy/http/filter-api';
import { decoded, jwks, request, Respond, sign, SigningKey, signingKey, TestContext } from './support';

const ISS_A = 'https://a.example.com';
const ISS_B = 'https://b.example.com';

describe('jwt_authn rules and requirements', () => {
  let keyA: SigningKey;
  let keyB: SigningKey;
  let stranger: SigningKey;
  let context: TestContext;

  before(async () => {
    [keyA, keyB, stranger] = await Promise.all([signingKey('ES256', 'a'), signingKey('ES256', 'b'), signingKey('ES256', 'a')]);
  });
  beforeEach(() => {
    context = new TestContext();
  });

  const providers = () => ({
    a: { issuer: ISS_A, local_jwks: { inline_string: jwks(keyA) }, payload_in_metadata: 'a', from_headers: [{ name: 'x-a', value_prefix: 'Bearer ' }] },
    b: { issuer: ISS_B, local_jwks: { inline_string: jwks(keyB) }, payload_in_metadata: 'b', audiences: ['svc-b'], from_headers: [{ name: 'x-b', value_prefix: 'Bearer ' }] },
  });
  const tokenA = (extra: Record<string, unknown> = {}) => sign(keyA, { iss: ISS_A, sub: 'a-user', exp: context.nowSeconds + 60, ...extra });
  const tokenB = (extra: Record<string, unknown> = {}) => sign(keyB, { iss: ISS_B, sub: 'b-user', aud: 'svc-b', exp: context.nowSeconds + 60, ...extra });
  const badA = () => sign(stranger, { iss: ISS_A, sub: 'x', exp: context.nowSeconds + 60 });

  function filterWith(config: Record<string, unknown>): HttpFilter {
    return jwtAuthnFilterFactory.create('jwt', decoded(JWT_AUTHN_TYPE_URL, { providers: providers(), ...config }), context);
  }
  const everywhere = (requires: Record<string, unknown>) => filterWith({ rules: [{ match: { prefix: '/' }, requires }] });
  const outcomeOf = async (filter: HttpFilter, headers: Record<string, string>, path = '/'): Promise<string> => {
    const outcome: FilterOutcome = await filter.onRequest(request({ path, headers }));
    return outcome.kind === 'continue' ? 'continue' : `${(outcome as Respond).status} ${(outcome as Respond).body}`;
  };

  it('applies the first rule whose route match fits; no matching rule means no check', async () => {
    const filter = filterWith({
      rules: [
        { match: { path: '/healthz' } },
        { match: { prefix: '/api', headers: [{ name: 'x-tenant', string_match: { exact: 'acme' } }] }, requires: { provider_name: 'b' } },
        { match: { prefix: '/api' }, requires: { provider_name: 'a' } },
        { match: { safe_regex: { regex: '/v[0-9]+/.*' }, query_parameters: [{ name: 'debug', present_match: true }] }, requires: { provider_name: 'a' } },
      ],
    });
    expect(await outcomeOf(filter, {}, '/healthz')).to.equal('continue');
    expect(await outcomeOf(filter, {}, '/public')).to.equal('continue');
    expect(await outcomeOf(filter, {}, '/api/items')).to.equal('401 Jwt is missing');
    expect(await outcomeOf(filter, { 'x-a': `Bearer ${await tokenA()}` }, '/api/items?x=1')).to.equal('continue');
    // The tenant rule comes first and wants provider b.
    expect(await outcomeOf(filter, { 'x-a': `Bearer ${await tokenA()}`, 'x-tenant': 'acme' }, '/api/items')).to.equal('401 Jwt is missing');
    expect(await outcomeOf(filter, {}, '/v2/x')).to.equal('continue');
    expect(await outcomeOf(filter, {}, '/v2/x?debug')).to.equal('401 Jwt is missing');
  });

  it('matches paths case-insensitively when case_sensitive is false', async () => {
    const filter = filterWith({ rules: [{ match: { prefix: '/API', case_sensitive: { value: false } }, requires: { provider_name: 'a' } }] });
    expect(await outcomeOf(filter, {}, '/api/x')).to.equal('401 Jwt is missing');
    const strict = filterWith({ rules: [{ match: { prefix: '/API' }, requires: { provider_name: 'a' } }] });
    expect(await outcomeOf(strict, {}, '/api/x')).to.equal('continue');
  });

  it('provider_and_audiences replaces the provider\'s audiences', async () => {
    const filter = everywhere({ provider_and_audiences: { provider_name: 'b', audiences: ['special'] } });
    expect(await outcomeOf(filter, { 'x-b': `Bearer ${await tokenB()}` })).to.equal('401 Audiences in Jwt are not allowed');
    expect(await outcomeOf(filter, { 'x-b': `Bearer ${await tokenB({ aud: 'special' })}` })).to.equal('continue');
  });

  it('requires_any: one good provider suffices; with none, the most telling failure answers', async () => {
    const filter = everywhere({ requires_any: { requirements: [{ provider_name: 'a' }, { provider_name: 'b' }] } });
    expect(await outcomeOf(filter, { 'x-b': `Bearer ${await tokenB()}` })).to.equal('continue');
    expect(await outcomeOf(filter, { 'x-a': `Bearer ${await tokenA()}` })).to.equal('continue');
    expect(await outcomeOf(filter, {})).to.equal('401 Jwt is missing');
    expect(await outcomeOf(filter, { 'x-a': `Bearer ${await badA()}` })).to.equal('401 Jwt verification fails');
  });

  it('requires_all: every provider must verify', async () => {
    const filter = everywhere({ requires_all: { requirements: [{ provider_name: 'a' }, { provider_name: 'b' }] } });
    const both = { 'x-a': `Bearer ${await tokenA()}`, 'x-b': `Bearer ${await tokenB()}` };
    const req = request({ headers: both });
    expect((await filter.onRequest(req)).kind).to.equal('continue');
    expect(Object.keys(req.metadata[JWT_AUTHN_METADATA]).sort()).to.deep.equal(['a', 'b']);
    expect(await outcomeOf(filter, { 'x-a': `Bearer ${await tokenA()}` })).to.equal('401 Jwt is missing');
  });

  it('allow_missing: no token passes, a bad one does not; the issuer picks the provider', async () => {
    const filter = everywhere({ allow_missing: {} });
    expect(await outcomeOf(filter, {})).to.equal('continue');
    const req = request({ headers: { 'x-b': `Bearer ${await tokenB()}` } });
    expect((await filter.onRequest(req)).kind).to.equal('continue');
    expect(req.metadata[JWT_AUTHN_METADATA]).to.have.property('b');
    expect(await outcomeOf(filter, { 'x-a': `Bearer ${await badA()}` })).to.equal('401 Jwt verification fails');
    // A token of provider b's issuer in provider a's header: that location does not accept the issuer.
    expect(await outcomeOf(filter, { 'x-a': `Bearer ${await tokenB()}` })).to.equal('401 Jwt issuer is not configured');
  });

  it('allow_missing_or_failed: anything passes, only good tokens reach the metadata', async () => {
    const filter = everywhere({ allow_missing_or_failed: {} });
    const bad = request({ headers: { 'x-a': `Bearer ${await badA()}` } });
    expect((await filter.onRequest(bad)).kind).to.equal('continue');
    expect(bad.metadata).to.not.have.property(JWT_AUTHN_METADATA);
    const good = request({ headers: { 'x-a': `Bearer ${await tokenA()}` } });
    expect((await filter.onRequest(good)).kind).to.equal('continue');
    expect((good.metadata[JWT_AUTHN_METADATA].a as Record<string, unknown>).sub).to.equal('a-user');
  });

  it('requires_any of a provider and allow_missing (the mesh\'s form): missing passes, invalid is 401, valid is verified', async () => {
    const filter = everywhere({ requires_any: { requirements: [{ provider_name: 'a' }, { allow_missing: {} }] } });
    expect(await outcomeOf(filter, {})).to.equal('continue');
    expect(await outcomeOf(filter, { 'x-a': `Bearer ${await badA()}` })).to.equal('401 Jwt verification fails');
    expect(await outcomeOf(filter, { 'x-a': `Bearer ${await tokenA({ exp: context.nowSeconds - 3600 })}` })).to.equal('401 Jwt is expired');
    const req = request({ headers: { 'x-a': `Bearer ${await tokenA()}` } });
    expect((await filter.onRequest(req)).kind).to.equal('continue');
    expect(req.metadata[JWT_AUTHN_METADATA]).to.have.property('a');
  });

  it('a rule may name a requirement of requirement_map', async () => {
    const filter = filterWith({ requirement_map: { onlyB: { provider_name: 'b' } }, rules: [{ match: { prefix: '/' }, requirement_name: 'onlyB' }] });
    expect(await outcomeOf(filter, { 'x-a': `Bearer ${await tokenA()}` })).to.equal('401 Jwt is missing');
    expect(await outcomeOf(filter, { 'x-b': `Bearer ${await tokenB()}` })).to.equal('continue');
  });

  it('reports failures in failed_status_in_metadata', async () => {
    const config = { providers: { a: { ...providers().a, failed_status_in_metadata: 'failure' } }, rules: [{ match: { prefix: '/' }, requires: { provider_name: 'a' } }] };
    const filter = jwtAuthnFilterFactory.create('jwt', decoded(JWT_AUTHN_TYPE_URL, config), context);
    const req = request({ headers: { 'x-a': `Bearer ${await badA()}` } });
    await filter.onRequest(req);
    expect(req.metadata[JWT_AUTHN_METADATA].failure).to.deep.equal({ code: 26, message: 'Jwt verification fails' });
  });

  describe('config it cannot honour is refused, naming the field', () => {
    const refused = (config: Record<string, unknown>, field: RegExp) => {
      expect(() => filterWith(config)).to.throw(FilterConfigError, field);
    };

    it('an unknown provider', () => refused({ rules: [{ match: { prefix: '/' }, requires: { provider_name: 'zzz' } }] }, /jwt\.rules\[0\]\.requires\.provider_name: provider "zzz" is not configured/));
    it('an unknown requirement name', () => refused({ rules: [{ match: { prefix: '/' }, requirement_name: 'nope' }] }, /jwt\.rules\[0\]\.requirement_name: "nope" is not in requirement_map/));
    it('filter_state_rules', () => refused({ filter_state_rules: { name: 'x', requires: {} } }, /jwt\.filter_state_rules: is not supported/));
    it('a regex that does not compile', () => refused({ rules: [{ match: { safe_regex: { regex: '(' } } }] }, /jwt\.rules\[0\]\.match\.safe_regex\.regex: regex "\(" does not compile/));
    it('a remote JWKS URI that is not http(s)', () =>
      expect(() =>
        jwtAuthnFilterFactory.create('jwt', decoded(JWT_AUTHN_TYPE_URL, { providers: { p: { remote_jwks: { http_uri: { uri: 'ftp://x/jwks', cluster: 'c' } } } } }), context),
      ).to.throw(/jwt\.providers\["p"\]\.remote_jwks\.http_uri\.uri: "ftp:\/\/x\/jwks" is not an http\(s\) URL/));
  });
});
