/**
 * The regexes the daemon writes into RBAC filters itself (globs in principals, namespaces,
 * service accounts and trust domains) are RE2, with the literal parts quoted as RE2 reads them:
 * each compiles and matches exactly the identities the policy names.
 */
import { expect } from 'chai';
import { AuthzHttpFilterContributor } from '../../../src/modules/security/authz';
import { compileFullMatcher, re2Problem } from '../../../src/modules/shared/re2';
import { Obj } from '../../helpers/envoy';
import { toProtoJson } from '../../helpers/proto-json';
import { proxyOf, pushOf } from '../../helpers/push';

const HTTP_FILTER_TYPE = 'envoy.extensions.filters.network.http_connection_manager.v3.HttpFilter';

/** Every safe_regex pattern anywhere in a value. */
function regexesIn(value: unknown): string[] {
  if (Array.isArray(value)) return value.flatMap(regexesIn);
  if (typeof value !== 'object' || value === null) return [];
  const own = (value as Obj).safeRegex?.regex;
  return [...(typeof own === 'string' ? [own] : []), ...Object.values(value).flatMap(regexesIn)];
}

describe('regexes the daemon generates for AuthorizationPolicy are RE2', () => {
  const yaml = `apiVersion: security.mesh.io/v1
kind: AuthorizationPolicy
metadata: { name: peers, namespace: foo }
spec:
  rules:
  - from: [{ source: { principals: ["*/ns/a.b/sa/c+d"] } }]
  - from: [{ source: { namespaces: ["team-*.x"] } }]
  - from: [{ source: { serviceAccounts: ["ops/robot.v2"] } }]
  - from: [{ source: { trustDomains: ["*.example(1).org"] } }]
`;
  const filters = new AuthzHttpFilterContributor({}).httpFilters({
    push: pushOf(yaml), proxy: proxyOf('10.0.0.1', 'foo'), direction: 'inbound', port: { name: 'http', number: 8000, protocol: 'HTTP', targetPort: 8080 },
  });
  const regexes = filters.flatMap((f) => regexesIn(toProtoJson(HTTP_FILTER_TYPE, f)));
  const anyMatches = (identity: string) => regexes.some((r) => compileFullMatcher(r).test(identity));

  it('each compiles as RE2', () => {
    expect(regexes).to.have.length.of.at.least(4);
    for (const regex of regexes) expect(re2Problem(regex), regex).to.equal(undefined);
  });

  it('takes the literal parts literally and the globs as globs', () => {
    expect(anyMatches('spiffe://td/ns/a.b/sa/c+d')).to.equal(true);
    expect(anyMatches('spiffe://td/ns/aXb/sa/ccd')).to.equal(false);
    expect(anyMatches('spiffe://td/ns/team-red.x/sa/s')).to.equal(true);
    expect(anyMatches('spiffe://td/ns/team-red-x/sa/s')).to.equal(false);
    expect(anyMatches('spiffe://td/ns/ops/sa/robot.v2')).to.equal(true);
    expect(anyMatches('spiffe://td/ns/ops/sa/robotXv2')).to.equal(false);
    expect(anyMatches('spiffe://eu.example(1).org/ns/n/sa/s')).to.equal(true);
    expect(anyMatches('spiffe://eu.example1.org/ns/n/sa/s')).to.equal(false);
  });
});
