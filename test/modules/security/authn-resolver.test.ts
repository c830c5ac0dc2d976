import { expect } from 'chai';
import { createLocalJWKSet, importJWK, jwtVerify } from 'jose';
import { DaemonMetrics } from '../../../src/modules/monitoring';
import {
  FAIL_CLOSED_KEY_ID, failClosedJwks, JwksResolver, JwksResolverOptions, KeySetLocation, keySetId, parseJwksFetchMode,
} from '../../../src/modules/security/authn';
import { metricValue } from '../../helpers/http';
import { jwksOf, JwksServer, newSigningKey, selfSignedTls, signToken, SigningKey } from './authn-jwks-server';

const SUCCESS = 'pilot_jwks_resolver_network_fetch_success_total';
const FAIL = 'pilot_jwks_resolver_network_fetch_fail_total';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** A resolver wired to DaemonMetrics as the daemon wires it, recording every onChange call. */
function resolverFor(options: Partial<JwksResolverOptions> = {}) {
  const metrics = new DaemonMetrics({ component: 'pilot-discovery', version: 'test' });
  const changes: string[][] = [];
  const errors: string[] = [];
  const waiters: Array<() => void> = [];
  const resolver = new JwksResolver({
    refreshIntervalMs: 60_000,
    insecureSkipVerify: false,
    observer: { fetched: (ok) => (ok ? metrics.jwksFetchSuccess : metrics.jwksFetchFail).inc() },
    logger: { info: () => undefined, warn: () => undefined, error: (m) => errors.push(m) },
    onChange: (ids) => {
      changes.push(ids);
      for (const w of waiters.splice(0)) w();
    },
    ...options,
  });
  const counts = async () => {
    const text = await metrics.metrics();
    return { success: metricValue(text, SUCCESS), fail: metricValue(text, FAIL) };
  };
  /** Resolves at the next onChange call. */
  const nextChange = (timeoutMs = 5000) =>
    new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`no key-set change within ${timeoutMs} ms`)), timeoutMs);
      waiters.push(() => {
        clearTimeout(timer);
        resolve();
      });
    });
  return { resolver, changes, errors, counts, nextChange };
}

const at = (jwksUri: string, timeoutMs = 5000): KeySetLocation => ({ jwksUri, issuer: 'https://issuer.test', timeoutMs });

describe('security/authn: the key-set resolver', function () {
  this.timeout(20_000);
  let keyA: SigningKey;
  let keyB: SigningKey;
  const servers: JwksServer[] = [];
  const resolvers: JwksResolver[] = [];
  const serve = async (body: string, tls?: { key: Buffer; cert: Buffer }, port?: number) => {
    const s = await JwksServer.start(body, tls, port);
    servers.push(s);
    return s;
  };
  const track = <T extends { resolver: JwksResolver }>(r: T): T => {
    resolvers.push(r.resolver);
    return r;
  };

  before(async () => {
    keyA = await newSigningKey('a');
    keyB = await newSigningKey('b');
  });
  afterEach(async () => {
    for (const r of resolvers.splice(0)) r.stop();
    await Promise.all(servers.splice(0).map((s) => s.stop()));
  });

  it('answers a new key set with the fail-closed set at once, then the fetched keys, and reports the change once', async () => {
    const server = await serve(jwksOf(keyA));
    const { resolver, changes, counts } = track(resolverFor());
    const location = at(server.url());
    expect(resolver.keySet(location)).to.equal(failClosedJwks());
    const before = resolver.version;
    await resolver.want([location]);
    expect(JSON.parse(resolver.keySet(location))).to.deep.equal(JSON.parse(jwksOf(keyA)));
    expect(resolver.version).to.equal(before + 1);
    expect(changes).to.deep.equal([[keySetId(location)]]);
    // Cached: asking again fetches nothing.
    resolver.keySet(location);
    await resolver.want([location]);
    expect(server.hits).to.equal(1);
    expect(await counts()).to.deep.equal({ success: 1, fail: 0 });
  });

  it('notices a key rotation at the refresh interval and reports it once; unchanged keys are not reported', async () => {
    const server = await serve(jwksOf(keyA));
    const { resolver, changes, nextChange } = track(resolverFor({ refreshIntervalMs: 100 }));
    const location = at(server.url());
    await resolver.want([location]);
    resolver.start();
    // Several refreshes of the same keys: fetched, never reported.
    await sleep(450);
    expect(server.hits).to.be.at.least(3);
    expect(changes).to.have.length(1);

    const rotated = nextChange();
    server.body = jwksOf(keyA, keyB);
    await rotated;
    expect(changes).to.deep.equal([[keySetId(location)], [keySetId(location)]]);
    expect(JSON.parse(resolver.keySet(location)).keys.map((k: { kid: string }) => k.kid)).to.deep.equal(['a', 'b']);
    // The same content, differently formatted, is no change either.
    server.body = JSON.stringify(JSON.parse(jwksOf(keyA, keyB)), null, 2);
    const hits = server.hits;
    await sleep(350);
    expect(server.hits).to.be.above(hits);
    expect(changes).to.have.length(2);
  });

  it('serves the fail-closed set when the key server is unreachable, counts the failure, and recovers on refresh', async () => {
    const server = await serve(jwksOf(keyA));
    server.down = true;
    const { resolver, changes, counts, errors } = track(resolverFor());
    const location = at(server.url());
    await resolver.want([location]);
    expect(resolver.keySet(location)).to.equal(failClosedJwks());
    expect(changes).to.deep.equal([]);
    expect(await counts()).to.deep.equal({ success: 0, fail: 1 });
    expect(errors.join('\n')).to.match(new RegExp(`cannot fetch the key set of http://127.0.0.1:${server.port}/jwks.json: .*fail-closed`));

    // A refresh that cannot reach it either changes nothing.
    expect(await resolver.refresh()).to.deep.equal({ changed: [], failed: 1 });
    expect(await counts()).to.deep.equal({ success: 0, fail: 2 });

    // The server comes up: the next refresh brings its keys, reported as a change.
    server.down = false;
    expect(await resolver.refresh()).to.deep.equal({ changed: [keySetId(location)], failed: 0 });
    expect(JSON.parse(resolver.keySet(location))).to.deep.equal(JSON.parse(jwksOf(keyA)));
    expect(changes).to.deep.equal([[keySetId(location)]]);
    expect(await counts()).to.deep.equal({ success: 1, fail: 2 });
  });

  it('keeps the last good keys when a refresh fails, and reports nothing', async () => {
    const server = await serve(jwksOf(keyA));
    const { resolver, changes, counts } = track(resolverFor());
    const location = at(server.url());
    await resolver.want([location]);
    server.status = 503;
    expect(await resolver.refresh()).to.deep.equal({ changed: [], failed: 1 });
    expect(JSON.parse(resolver.keySet(location))).to.deep.equal(JSON.parse(jwksOf(keyA)));
    expect(changes).to.have.length(1);
    expect(await counts()).to.deep.equal({ success: 1, fail: 1 });
  });

  it('treats an answer that is not a usable key set as a failed fetch', async () => {
    const server = await serve('<html>maintenance</html>');
    const { resolver, counts, errors } = track(resolverFor());
    const location = at(server.url());
    await resolver.want([location]);
    expect(resolver.keySet(location)).to.equal(failClosedJwks());
    server.body = '{"keys": []}';
    await resolver.refresh();
    expect(resolver.keySet(location)).to.equal(failClosedJwks());
    expect(await counts()).to.deep.equal({ success: 0, fail: 2 });
    expect(errors[0]).to.match(/not JSON/);
    expect(errors[1]).to.match(/has no keys/);
  });

  it('gives up on a slow key server after the rule timeout, without holding the caller', async () => {
    const server = await serve(jwksOf(keyA));
    server.delayMs = 3000;
    const { resolver, counts, errors } = track(resolverFor());
    const location = at(server.url(), 200);
    const started = Date.now();
    expect(resolver.keySet(location)).to.equal(failClosedJwks());
    await resolver.want([location]);
    expect(Date.now() - started).to.be.below(1500);
    expect(resolver.keySet(location)).to.equal(failClosedJwks());
    expect(errors.join('\n')).to.match(/timed out after 200 ms/);
    expect(await counts()).to.deep.equal({ success: 0, fail: 1 });
  });

  it('verifies the key server certificate unless JWKS_RESOLVER_INSECURE_SKIP_VERIFY is set', async () => {
    const server = await serve(jwksOf(keyA), selfSignedTls());
    const location = at(server.url());

    const strict = track(resolverFor({ insecureSkipVerify: false }));
    await strict.resolver.want([location]);
    expect(strict.resolver.keySet(location)).to.equal(failClosedJwks());
    expect(strict.errors.join('\n')).to.match(/self[- ]signed certificate/);
    expect(await strict.counts()).to.deep.equal({ success: 0, fail: 1 });

    const insecure = track(resolverFor({ insecureSkipVerify: true }));
    await insecure.resolver.want([location]);
    expect(JSON.parse(insecure.resolver.keySet(location))).to.deep.equal(JSON.parse(jwksOf(keyA)));
    expect(await insecure.counts()).to.deep.equal({ success: 1, fail: 0 });
  });

  it('finds the key set of an issuer without jwksUri through its OpenID discovery document', async () => {
    const server = await serve(jwksOf(keyB));
    const { resolver, counts } = track(resolverFor());
    const location: KeySetLocation = { issuer: server.url(''), timeoutMs: 2000 };
    await resolver.want([location]);
    expect(JSON.parse(resolver.keySet(location))).to.deep.equal(JSON.parse(jwksOf(keyB)));
    // Two fetches: the discovery document, then the key set.
    expect(await counts()).to.deep.equal({ success: 2, fail: 0 });
  });

  it('forgets key sets no longer wanted, and stops refreshing them', async () => {
    const a = await serve(jwksOf(keyA));
    const b = await serve(jwksOf(keyB));
    const { resolver } = track(resolverFor());
    await resolver.want([at(a.url()), at(b.url())]);
    resolver.retainOnly([keySetId(at(b.url()))]);
    expect(resolver.known()).to.deep.equal([keySetId(at(b.url()))]);
    await resolver.refresh();
    expect([a.hits, b.hits]).to.deep.equal([1, 2]);
  });

  it('stops its refresh timer on stop', async () => {
    const server = await serve(jwksOf(keyA));
    const { resolver } = track(resolverFor({ refreshIntervalMs: 50 }));
    await resolver.want([at(server.url())]);
    resolver.start();
    await sleep(200);
    resolver.stop();
    const hits = server.hits;
    await sleep(200);
    expect(server.hits).to.equal(hits);
  });
});

describe('security/authn: the fail-closed key set', () => {
  it('is one P-256 public key, the same every time, that verifies no token', async () => {
    const jwks = JSON.parse(failClosedJwks());
    expect(failClosedJwks()).to.equal(JSON.stringify(jwks));
    expect(jwks.keys).to.have.length(1);
    const [key] = jwks.keys;
    expect(key).to.include({ kty: 'EC', crv: 'P-256', alg: 'ES256', kid: FAIL_CLOSED_KEY_ID });
    expect(key).to.not.have.property('d');
    // A valid curve point: the key imports.
    await importJWK(key, 'ES256');
    // Tokens signed with any key we can make, even one claiming its kid, do not verify.
    const keySet = createLocalJWKSet(jwks);
    for (const signer of [await newSigningKey(FAIL_CLOSED_KEY_ID, 'ES256'), await newSigningKey('other', 'RS256')]) {
      const token = await signToken(signer, { iss: 'https://issuer.test', sub: 'alice' });
      let error: unknown;
      await jwtVerify(token, keySet).catch((e) => (error = e));
      expect(error, signer.jwk.alg).to.be.instanceOf(Error);
    }
  });
});

describe('security/authn: PILOT_JWT_ENABLE_REMOTE_JWKS', () => {
  it('maps the spec values to the three modes, in any letter case', () => {
    expect(['meshd', 'false', 'FALSE', 'hybrid', 'true', 'True', 'proxy'].map((v) => parseJwksFetchMode(v))).to.deep.equal([
      'meshd', 'meshd', 'meshd', 'hybrid', 'hybrid', 'hybrid', 'proxy',
    ]);
  });

  it('refuses anything else, naming the setting and the values it accepts', () => {
    for (const bad of ['envoy', 'istiod', '', 'constructor']) {
      expect(() => parseJwksFetchMode(bad)).to.throw(
        `invalid value ${JSON.stringify(bad)} for setting PILOT_JWT_ENABLE_REMOTE_JWKS: expected one of meshd, false, hybrid, true, proxy`,
      );
    }
  });
});
