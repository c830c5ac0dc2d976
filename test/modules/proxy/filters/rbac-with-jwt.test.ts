import { expect } from 'chai';
import { HTTP_RBAC_TYPE_URL, JWT_AUTHN_TYPE_URL, jwtAuthnFilterFactory, rbacHttpFilterFactory } from '../../../../src/modules/proxy/filters';
import type { HttpFilter } from '../../../../src/modules/proxy/http/filter-api';
import { decoded, jwks, request, run, sign, SigningKey, signingKey, TestContext } from './support';

const ISSUER = 'https://issuer.example.com';
const JWT = 'envoy.filters.http.jwt_authn';

/** A string claim or a list claim containing one of `values` (the generator's form for claims). */
function claimIn(path: string[], values: string[]): Record<string, unknown> {
  const matchers = values.map((exact) => ({ string_match: { exact } }));
  const one = matchers.length === 1 ? matchers[0] : { or_match: { value_matchers: matchers } };
  return {
    metadata: {
      filter: JWT,
      path: ['payload', ...path].map((key) => ({ key })),
      value: { or_match: { value_matchers: [{ list_match: { one_of: one } }, one] } },
    },
  };
}

/** `requestPrincipals: ["<iss>/<sub>"]` as the generator writes it. */
function requestPrincipal(iss: string, sub: string): Record<string, unknown> {
  const is = (key: string, exact: string) => ({ metadata: { filter: JWT, path: [{ key: 'payload' }, { key }], value: { string_match: { exact } } } });
  return { and_ids: { ids: [is('iss', iss), is('sub', sub)] } };
}

describe('jwt_authn followed by RBAC (request principals and claims)', () => {
  let key: SigningKey;
  let context: TestContext;
  let chain: HttpFilter[];

  before(async () => {
    key = await signingKey('RS256', 'k1');
  });

  beforeEach(() => {
    context = new TestContext();
    const jwt = jwtAuthnFilterFactory.create(
      JWT,
      decoded(JWT_AUTHN_TYPE_URL, {
        providers: { origins: { issuer: ISSUER, local_jwks: { inline_string: jwks(key) }, payload_in_metadata: 'payload', forward: true } },
        rules: [{ match: { prefix: '/' }, requires: { requires_any: { requirements: [{ provider_name: 'origins' }, { allow_missing: {} }] } } }],
      }),
      context,
    );
    const rbac = rbacHttpFilterFactory.create(
      'envoy.filters.http.rbac',
      decoded(HTTP_RBAC_TYPE_URL, {
        rules: {
          policies: {
            'ns[foo]-policy[admins]-rule[0]': {
              permissions: [{ and_rules: { rules: [{ any: true }] } }],
              principals: [{ and_ids: { ids: [{ or_ids: { ids: [requestPrincipal(ISSUER, 'alice'), requestPrincipal(ISSUER, 'bob')] } }, claimIn(['groups'], ['admin'])] } }],
            },
            'ns[foo]-policy[teams]-rule[0]': {
              permissions: [{ and_rules: { rules: [{ url_path: { path: { prefix: '/team/' } } }] } }],
              principals: [{ and_ids: { ids: [claimIn(['org', 'team'], ['core', 'edge'])] } }],
            },
          },
        },
        shadow_rules_stat_prefix: 'mesh_dry_run_allow_',
      }),
      context,
    );
    chain = [jwt, rbac];
  });

  const token = (claims: Record<string, unknown>) => sign(key, { iss: ISSUER, exp: context.nowSeconds + 600, ...claims });
  const status = async (path: string, claims?: Record<string, unknown>, raw?: string): Promise<number> => {
    const headers: Record<string, string> = claims || raw ? { authorization: `Bearer ${raw ?? (await token(claims!))}` } : {};
    const outcome = await run(chain, request({ path, headers }));
    return outcome.kind === 'continue' ? 200 : outcome.status;
  };

  it('allows a listed request principal whose list claim `groups` contains "admin"', async () => {
    expect(await status('/x', { sub: 'alice', groups: ['dev', 'admin'] })).to.equal(200);
    expect(await status('/x', { sub: 'bob', groups: 'admin' })).to.equal(200);
  });

  it('denies with 403 when the claim does not hold, is absent, or the principal is not listed', async () => {
    expect(await status('/x', { sub: 'alice', groups: ['dev'] })).to.equal(403);
    expect(await status('/x', { sub: 'alice' })).to.equal(403);
    expect(await status('/x', { sub: 'carol', groups: ['admin'] })).to.equal(403);
  });

  it('denies a request without a token (no JWT metadata) with 403, and an invalid token with 401 before RBAC', async () => {
    expect(await status('/x')).to.equal(403);
    expect(await status('/x', undefined, 'a.b.c')).to.equal(401);
  });

  it('matches nested claims', async () => {
    expect(await status('/team/a', { sub: 'zed', org: { team: 'edge' } })).to.equal(200);
    expect(await status('/team/a', { sub: 'zed', org: { team: ['ops', 'core'] } })).to.equal(200);
    expect(await status('/team/a', { sub: 'zed', org: { team: 'sales' } })).to.equal(403);
    expect(await status('/team/a', { sub: 'zed', team: 'core' })).to.equal(403);
  });
});
