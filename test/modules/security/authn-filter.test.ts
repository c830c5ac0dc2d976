import { expect } from 'chai';
import { createContainer } from '../../../src/container';
import { XdsGenerators } from '../../../src/modules/generators';
import { SidecarGenerator } from '../../../src/modules/generators/sidecar';
import { Proxy, PushContext } from '../../../src/modules/model';
import {
  failClosedJwks, JwksFetchMode, JwksResolver, RequestAuthenticationFilters,
} from '../../../src/modules/security/authn';
import { TypeUrl } from '../../../src/modules/envoy/type-urls';
import { decodedOf, hcmOf, inboundFilters, listenersOf, Obj, outboundFilters } from '../../helpers/envoy';
import { proxyOf, pushOf, serviceEntryYaml, workloadServiceYaml } from '../../helpers/push';
import { REPO_ROOT } from '../../helpers/run-cli';
import { closedPort, jwksOf, JwksServer, newSigningKey, SigningKey } from './authn-jwks-server';

const JWT_AUTHN = 'envoy.filters.http.jwt_authn';
const JWT_AUTHN_TYPE = 'type.googleapis.com/envoy.extensions.filters.http.jwt_authn.v3.JwtAuthentication';

/** httpbin (10.0.0.10, app=httpbin) in foo, serving HTTP 8000; a key server inside the mesh; a client service. */
const MESH = `
${workloadServiceYaml({ namespace: 'foo', name: 'httpbin', address: '10.0.0.10', ports: ['{ number: 8000, name: http, protocol: HTTP, targetPort: 8080 }'] })}
${serviceEntryYaml('auth', 'keys', 'keys.auth.svc.cluster.local', 'STATIC', '{ number: 8080, name: http, protocol: HTTP }', `
  location: MESH_INTERNAL`)}`;

/** A RequestAuthentication; `rules` is the YAML list of its jwtRules, `namespace` defaults to foo. */
function policy(name: string, rules: string, options: { namespace?: string; selector?: string } = {}): string {
  const selector = options.selector === undefined ? '\n  selector: { matchLabels: { app: httpbin } }' : options.selector;
  return `
---
apiVersion: security.mesh.io/v1
kind: RequestAuthentication
metadata: { name: ${name}, namespace: ${options.namespace ?? 'foo'} }
spec:${selector}
  jwtRules: ${rules}
`;
}

const httpbin = proxyOf('10.0.0.10', 'foo', { app: 'httpbin', version: 'v1' });

/** The decoded HTTP filters of httpbin's inbound HTTP chain. */
function inboundHttpFilters(gen: SidecarGenerator, push: PushContext, proxy: Proxy = httpbin): Obj[] {
  return hcmOf(inboundFilters({ listeners: listenersOf(gen, push, proxy) as Record<string, Obj> }, 8000)).http_filters;
}

/** The jwt_authn config of httpbin's inbound chain, or undefined when there is no such filter. */
function jwtAuthnOf(gen: SidecarGenerator, push: PushContext, proxy: Proxy = httpbin): Obj | undefined {
  return inboundHttpFilters(gen, push, proxy).find((f) => f.name === JWT_AUTHN)?.typed_config;
}

/** A decoded provider: what every provider carries, plus `fields`. */
const provider = (fields: Obj): Obj => ({
  payload_in_metadata: 'payload',
  normalize_payload_in_metadata: { space_delimited_claims: ['permission', 'scope'] },
  from_headers: [{ name: 'Authorization', value_prefix: 'Bearer ' }],
  from_params: ['access_token'],
  ...fields,
});
const inline = (jwks: string) => ({ local_jwks: { inline_string: jwks } });
const requireOne = { requires_any: { requirements: [{ provider_name: 'origins-0' }, { allow_missing: {} }] } };

describe('security/authn: RequestAuthentication → jwt_authn', function () {
  this.timeout(20_000);
  let keyA: SigningKey;
  let keyB: SigningKey;
  let server: JwksServer;
  const resolvers: JwksResolver[] = [];

  /** A sidecar generator with the jwt_authn contributor in `mode`, over a fresh resolver. */
  function generator(mode: JwksFetchMode, onChange?: (ids: string[]) => void): { gen: SidecarGenerator; resolver: JwksResolver } {
    const resolver = new JwksResolver({ refreshIntervalMs: 60_000, insecureSkipVerify: false, onChange });
    resolvers.push(resolver);
    return { gen: new SidecarGenerator({ httpFilters: [new RequestAuthenticationFilters({ mode, keySets: resolver })] }), resolver };
  }

  before(async () => {
    keyA = await newSigningKey('a');
    keyB = await newSigningKey('b');
    server = await JwksServer.start(jwksOf(keyA));
  });
  after(async () => {
    for (const r of resolvers) r.stop();
    await server.stop();
  });

  it('daemon mode: one provider with the fetched keys inlined, first in the inbound chain; tokens may be missing', async () => {
    const { gen, resolver } = generator('meshd');
    const push = pushOf(MESH + policy('jwt', `[{ issuer: "https://issuer.test", jwksUri: "${server.url()}" }]`));
    await resolver.want([{ jwksUri: server.url(), issuer: 'https://issuer.test', timeoutMs: 5000 }]);
    const filters = inboundHttpFilters(gen, push);
    expect(filters.map((f) => f.name)).to.deep.equal([JWT_AUTHN, 'envoy.filters.http.router']);
    expect(filters[0].typed_config).to.deep.equal({
      '@type': JWT_AUTHN_TYPE,
      providers: { 'origins-0': provider({ issuer: 'https://issuer.test', ...inline(JSON.stringify(JSON.parse(jwksOf(keyA)))) }) },
      rules: [{ match: { prefix: '/' }, requires: requireOne }],
      bypass_cors_preflight: true,
    });
  });

  it('adds nothing to outbound chains, nor to workloads no policy selects', () => {
    const { gen } = generator('meshd');
    const push = pushOf(MESH + policy('jwt', `[{ issuer: "https://issuer.test", jwks: '${jwksOf(keyA)}' }]`));
    const listeners = listenersOf(gen, push, httpbin) as Record<string, Obj>;
    expect(hcmOf(outboundFilters({ listeners }, 8000)).http_filters.map((f: Obj) => f.name)).to.not.include(JWT_AUTHN);
    // Same namespace, other labels; and a workload with the labels in another namespace.
    const unselected = pushOf(MESH + policy('jwt', `[{ issuer: "https://issuer.test", jwks: '${jwksOf(keyA)}' }]`, { selector: '\n  selector: { matchLabels: { app: other } }' }));
    expect(jwtAuthnOf(gen, unselected)).to.equal(undefined);
    const elsewhere = pushOf(MESH + policy('jwt', `[{ issuer: "https://issuer.test", jwks: '${jwksOf(keyA)}' }]`, { namespace: 'bar' }));
    expect(jwtAuthnOf(gen, elsewhere)).to.equal(undefined);
    // A policy without rules, or none at all: no filter.
    expect(jwtAuthnOf(gen, pushOf(MESH + policy('empty', '[]')))).to.equal(undefined);
    expect(jwtAuthnOf(gen, pushOf(MESH))).to.equal(undefined);
  });

  it('merges every policy in force (root namespace and own namespace) into providers ordered by issuer', () => {
    const { gen } = generator('meshd');
    const jwksA = jwksOf(keyA);
    const jwksB = jwksOf(keyB);
    const push = pushOf(
      MESH +
        policy('mesh-wide', `[{ issuer: "https://z.test", jwks: '${jwksA}' }]`, { namespace: 'mesh-system', selector: '' }) +
        policy('ns-wide', `[{ issuer: "https://b.test", jwks: '${jwksB}' }]`, { selector: '' }) +
        policy('workload', `[{ issuer: "https://a.test", jwks: '${jwksA}' }]`),
    );
    const config = jwtAuthnOf(gen, push)!;
    expect(Object.entries(config.providers).map(([name, p]) => [name, (p as Obj).issuer])).to.deep.equal([
      ['origins-0', 'https://a.test'],
      ['origins-1', 'https://b.test'],
      ['origins-2', 'https://z.test'],
    ]);
    expect(config.providers['origins-1'].local_jwks).to.deep.equal({ inline_string: jwksB });
    const optional = (i: number) => ({ requires_any: { requirements: [{ provider_name: `origins-${i}` }, { allow_missing: {} }] } });
    expect(config.rules).to.deep.equal([
      {
        match: { prefix: '/' },
        requires: {
          requires_any: {
            requirements: [
              { provider_name: 'origins-0' },
              { provider_name: 'origins-1' },
              { provider_name: 'origins-2' },
              { requires_all: { requirements: [optional(0), optional(1), optional(2)] } },
            ],
          },
        },
      },
    ]);
  });

  it('reads tokens from the headers, parameters and cookies a rule names, and writes its outputs', () => {
    const { gen } = generator('meshd');
    const jwks = jwksOf(keyA);
    const push = pushOf(
      MESH +
        policy(
          'jwt',
          `
    - issuer: "https://issuer.test"
      audiences: [httpbin, api]
      jwks: '${jwks}'
      fromHeaders: [{ name: x-jwt-assertion }, { name: Authorization, prefix: "Token " }]
      fromParams: [token]
      fromCookies: [session]
      forwardOriginalToken: true
      outputPayloadToHeader: x-jwt-payload
      outputClaimToHeaders: [{ header: x-sub, claim: sub }, { header: x-groups, claim: groups }]`,
        ),
    );
    expect(jwtAuthnOf(gen, push)!.providers['origins-0']).to.deep.equal({
      issuer: 'https://issuer.test',
      audiences: ['httpbin', 'api'],
      payload_in_metadata: 'payload',
      normalize_payload_in_metadata: { space_delimited_claims: ['permission', 'scope'] },
      from_headers: [{ name: 'x-jwt-assertion' }, { name: 'Authorization', value_prefix: 'Token ' }],
      from_params: ['token'],
      from_cookies: ['session'],
      forward: true,
      forward_payload_header: 'x-jwt-payload',
      claim_to_headers: [
        { header_name: 'x-sub', claim_name: 'sub' },
        { header_name: 'x-groups', claim_name: 'groups' },
      ],
      local_jwks: { inline_string: jwks },
    });
  });

  it('uses a key set written in the rule as is, whoever fetches key sets', () => {
    const jwks = jwksOf(keyB);
    for (const mode of ['meshd', 'hybrid', 'proxy'] as const) {
      const { gen } = generator(mode);
      const push = pushOf(MESH + policy('jwt', `[{ issuer: "https://issuer.test", jwks: '${jwks}' }]`));
      expect(jwtAuthnOf(gen, push)!.providers['origins-0'], mode).to.deep.equal(provider({ issuer: 'https://issuer.test', ...inline(jwks) }));
    }
  });

  describe('who fetches key sets (PILOT_JWT_ENABLE_REMOTE_JWKS)', () => {
    const inMesh = 'http://keys.auth.svc.cluster.local:8080/jwks.json';
    const rules = () => `
    - { issuer: "https://mesh.test", jwksUri: "${inMesh}", timeout: 2500ms }
    - { issuer: "https://outside.test", jwksUri: "${server.url()}" }`;
    const remote = (uri: string, cluster: string, timeout: Obj) => ({ remote_jwks: { http_uri: { uri, cluster, timeout }, cache_duration: { seconds: '300' } } });
    const fetched = () => inline(JSON.stringify(JSON.parse(jwksOf(keyA))));

    it('meshd: the daemon fetches every key set, in the mesh or not', async () => {
      const { gen, resolver } = generator('meshd');
      const push = pushOf(MESH + policy('jwt', rules()));
      jwtAuthnOf(gen, push);
      await resolver.want([{ jwksUri: server.url(), timeoutMs: 5000 }]);
      expect(resolver.known()).to.have.members([`jwks ${inMesh}`, `jwks ${server.url()}`]);
    });

    it('hybrid: the proxy fetches from a key server in the mesh through its cluster; the daemon inlines the others', async () => {
      const { gen, resolver } = generator('hybrid');
      await resolver.want([{ jwksUri: server.url(), timeoutMs: 5000 }]);
      const config = jwtAuthnOf(gen, pushOf(MESH + policy('jwt', rules())))!;
      expect(config.providers).to.deep.equal({
        'origins-0': provider({ issuer: 'https://mesh.test', ...remote(inMesh, 'outbound|8080||keys.auth.svc.cluster.local', { seconds: '2', nanos: 500000000 }) }),
        'origins-1': provider({ issuer: 'https://outside.test', ...fetched() }),
      });
      expect(resolver.known()).to.deep.equal([`jwks ${server.url()}`]);
    });

    it('proxy: the proxy fetches every key set, through the outbound cluster named after the URI host and port', () => {
      const { gen, resolver } = generator('proxy');
      const config = jwtAuthnOf(gen, pushOf(MESH + policy('jwt', `${rules()}
    - { issuer: "https://login.example.com", jwksUri: "https://login.example.com/keys" }`)))!;
      expect(config.providers).to.deep.equal({
        'origins-0': provider({ issuer: 'https://login.example.com', ...remote('https://login.example.com/keys', 'outbound|443||login.example.com', { seconds: '5' }) }),
        'origins-1': provider({ issuer: 'https://mesh.test', ...remote(inMesh, 'outbound|8080||keys.auth.svc.cluster.local', { seconds: '2', nanos: 500000000 }) }),
        'origins-2': provider({ issuer: 'https://outside.test', ...remote(server.url(), `outbound|${server.port}||127.0.0.1`, { seconds: '5' }) }),
      });
      expect(resolver.known()).to.deep.equal([]);
    });
  });

  it('fails closed: a key set the daemon cannot fetch is replaced by one that verifies no token, and the provider stays', async () => {
    const { gen, resolver } = generator('meshd');
    const uri = `http://127.0.0.1:${await closedPort()}/jwks.json`;
    const push = pushOf(MESH + policy('jwt', `[{ issuer: "https://issuer.test", jwksUri: "${uri}" }]`));
    await resolver.want([{ jwksUri: uri, timeoutMs: 5000 }]);
    const config = jwtAuthnOf(gen, push)!;
    expect(config.providers).to.deep.equal({ 'origins-0': provider({ issuer: 'https://issuer.test', ...inline(failClosedJwks()) }) });
    expect(config.rules).to.deep.equal([{ match: { prefix: '/' }, requires: requireOne }]);
  });

  it('does not wait for a key set seen for the first time: fail-closed now, the keys in the next push context', async () => {
    // The daemon answers onChange with a push; here the test waits for it.
    let changed: (ids: string[]) => void = () => undefined;
    const reported = new Promise<string[]>((resolve) => (changed = resolve));
    const { gen } = generator('meshd', (ids) => changed(ids));
    const yaml = MESH + policy('jwt', `[{ issuer: "https://issuer.test", jwksUri: "${server.url()}" }]`);
    const first = jwtAuthnOf(gen, pushOf(yaml, '1'))!;
    expect(first.providers['origins-0'].local_jwks).to.deep.equal({ inline_string: failClosedJwks() });
    expect(await reported).to.deep.equal([`jwks ${server.url()}`]);
    const second = jwtAuthnOf(gen, pushOf(yaml, '2'))!;
    expect(second.providers['origins-0'].local_jwks).to.deep.equal({ inline_string: JSON.stringify(JSON.parse(jwksOf(keyA))) });
  });

  it('is the first inbound HTTP filter of the daemon\'s generator, before every plugin filter', () => {
    // The generator the daemon serves, composed by the container (jwt_authn is the jwt-authn plugin's).
    const { container } = createContainer({ program: 'pilot-discovery', env: { PILOT_JWT_ENABLE_REMOTE_JWKS: 'meshd' }, cwd: REPO_ROOT });
    const gen = container.get(XdsGenerators).byName.get('')!;
    const push = pushOf(MESH + policy('jwt', `[{ issuer: "https://issuer.test", jwks: '${jwksOf(keyA)}' }]`));
    const listeners = decodedOf<Obj>(gen, TypeUrl.Listener, push, httpbin);
    const names = hcmOf(inboundFilters({ listeners }, 8000)).http_filters.map((f: Obj) => f.name);
    // metadata exchange is on by default, so a plugin's filter is there to come after.
    expect(names).to.deep.equal([JWT_AUTHN, 'mesh.metadata_exchange', 'envoy.filters.http.router']);
  });
});
