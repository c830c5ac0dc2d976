import { expect } from 'chai';
import { JWT_AUTHN_TYPE_URL, jwtAuthnFilterFactory } from '../../../../src/modules/proxy/filters';
import type { FilterOutcome, HttpFilter } from '../../../../src/modules/proxy/http/filter-api';
import { decoded, jwks, JwksServer, request, Respond, sign, SigningKey, signingKey, TestContext, unreachableUrl } from './support';

const ISSUER = 'https://issuer.example.com';

describe('jwt_authn with remote_jwks (a real JWKS endpoint)', () => {
  let oldKey: SigningKey;
  let newKey: SigningKey;
  let server: JwksServer;
  let context: TestContext;
  const filters: HttpFilter[] = [];

  before(async () => {
    [oldKey, newKey] = await Promise.all([signingKey('RS256', 'old'), signingKey('EdDSA', 'new')]);
  });
  beforeEach(async () => {
    context = new TestContext();
    server = await new JwksServer().start();
    server.body = jwks(oldKey);
  });
  afterEach(async () => {
    for (const f of filters.splice(0)) f.close?.();
    await server.stop();
  });

  function filterFor(remote: Record<string, unknown>): HttpFilter {
    const config = decoded(JWT_AUTHN_TYPE_URL, {
      providers: { p: { issuer: ISSUER, remote_jwks: remote } },
      rules: [{ match: { prefix: '/' }, requires: { provider_name: 'p' } }],
    });
    const filter = jwtAuthnFilterFactory.create('jwt', config, context);
    filters.push(filter);
    return filter;
  }
  const remote = (extra: Record<string, unknown> = {}, uri = server.url) => ({
    http_uri: { uri, cluster: 'outbound|80||issuer.example.com', timeout: { seconds: 2 } },
    ...extra,
  });
  const token = (key: SigningKey) => sign(key, { iss: ISSUER, sub: 's', exp: context.nowSeconds + 3600 });
  const call = async (filter: HttpFilter, key: SigningKey): Promise<string> => {
    const outcome: FilterOutcome = await filter.onRequest(request({ headers: { authorization: `Bearer ${await token(key)}` } }));
    return outcome.kind === 'continue' ? 'continue' : `${(outcome as Respond).status} ${(outcome as Respond).body}`;
  };

  it('fetches the key set on first use and keeps it for cache_duration', async () => {
    const filter = filterFor(remote({ cache_duration: { seconds: 300 } }));
    expect(server.fetches).to.equal(0);
    expect(await call(filter, oldKey)).to.equal('continue');
    expect(await call(filter, oldKey)).to.equal('continue');
    context.advanceSeconds(299);
    expect(await call(filter, oldKey)).to.equal('continue');
    expect(server.fetches).to.equal(1);
  });

  it('picks up rotated keys once the cache expires', async () => {
    const filter = filterFor(remote({ cache_duration: { seconds: 300 } }));
    expect(await call(filter, oldKey)).to.equal('continue');
    server.body = jwks(newKey);
    // Still the cached set: the new kid is unknown, the old key still verifies.
    expect(await call(filter, newKey)).to.equal("401 Jwks doesn't have key to match kid or alg from Jwt");
    expect(await call(filter, oldKey)).to.equal('continue');
    context.advanceSeconds(301);
    expect(await call(filter, newKey)).to.equal('continue');
    expect(await call(filter, oldKey)).to.equal("401 Jwks doesn't have key to match kid or alg from Jwt");
    expect(server.fetches).to.equal(2);
  });

  it('caches for 10 minutes when cache_duration is not set, as Envoy', async () => {
    const filter = filterFor(remote());
    expect(await call(filter, oldKey)).to.equal('continue');
    context.advanceSeconds(9 * 60);
    expect(await call(filter, oldKey)).to.equal('continue');
    expect(server.fetches).to.equal(1);
    context.advanceSeconds(2 * 60);
    expect(await call(filter, oldKey)).to.equal('continue');
    expect(server.fetches).to.equal(2);
  });

  it('fails closed when the endpoint is unreachable (401), and recovers without caching the failure', async () => {
    const filter = filterFor(remote({}, await unreachableUrl()));
    expect(await call(filter, oldKey)).to.equal('401 Jwks remote fetch is failed');
    expect(context.logs.join('\n')).to.match(/fetching JWKS from http:\/\/127\.0\.0\.1:\d+\/jwks failed/);

    const flaky = filterFor(remote());
    server.status = 503;
    expect(await call(flaky, oldKey)).to.equal('401 Jwks remote fetch is failed');
    server.status = 200;
    expect(await call(flaky, oldKey)).to.equal('continue');
    expect(server.fetches).to.equal(2);
  });

  it('fails a fetch that does not answer within http_uri.timeout', async () => {
    server.delayMs = 3000;
    const filter = filterFor({ http_uri: { uri: server.url, cluster: 'c', timeout: { nanos: 200_000_000 } } });
    const started = Date.now();
    expect(await call(filter, oldKey)).to.equal('401 Jwks remote fetch is failed');
    expect(Date.now() - started).to.be.lessThan(2000);
    expect(context.logs.join('\n')).to.match(/no answer within 200ms/);
  });

  it('fails tokens when the endpoint serves something that is not a key set', async () => {
    server.body = '<html>login</html>';
    expect(await call(filterFor(remote()), oldKey)).to.equal('401 Jwks remote fetch is failed');
  });

  it('shares one fetch between concurrent requests', async () => {
    server.delayMs = 200;
    const filter = filterFor(remote());
    const results = await Promise.all([oldKey, oldKey, oldKey, oldKey, oldKey].map((k) => call(filter, k)));
    expect(results).to.deep.equal(['continue', 'continue', 'continue', 'continue', 'continue']);
    expect(server.fetches).to.equal(1);
  });

  it('fetches ahead of the first request with async_fetch', async () => {
    const filter = filterFor(remote({ async_fetch: {} }));
    for (let i = 0; i < 50 && server.fetches === 0; i++) await new Promise((r) => setTimeout(r, 10));
    expect(server.fetches).to.equal(1);
    expect(await call(filter, oldKey)).to.equal('continue');
    expect(server.fetches).to.equal(1);
  });
});
