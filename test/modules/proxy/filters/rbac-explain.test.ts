/**
 * The RBAC filters' explanations: a traced request gets each engine's policies with the first
 * failing condition (permission side before principal side), the same words reach the debug
 * log when it is on, and nothing is worked out when neither asks.
 */
import { expect } from 'chai';
import { HTTP_RBAC_TYPE_URL, NETWORK_RBAC_TYPE_URL, rbacHttpFilterFactory, rbacNetworkFilterFactory, RbacReport } from '../../../../src/modules/proxy/filters';
import type { FilterReport } from '../../../../src/modules/proxy/http/filter-api';
import { decoded, DEFAULT_CONNECTION, request, TestContext } from './support';

const JWT = 'envoy.filters.http.jwt_authn';

const CONFIG = {
  rules: {
    action: 'ALLOW',
    policies: {
      'ns[foo]-policy[api]-rule[0]': {
        permissions: [{ and_rules: { rules: [{ header: { name: ':method', string_match: { exact: 'GET' } } }, { url_path: { path: { prefix: '/api/' } } }] } }],
        principals: [{ any: true }],
      },
      'ns[foo]-policy[api]-rule[1]': {
        permissions: [{ any: true }],
        principals: [
          {
            and_ids: {
              ids: [
                { metadata: { filter: JWT, path: [{ key: 'payload' }, { key: 'groups' }], value: { list_match: { one_of: { string_match: { exact: 'admins' } } } } } },
                { not_id: { direct_remote_ip: { address_prefix: '10.9.0.0', prefix_len: { value: 16 } } } },
              ],
            },
          },
        ],
      },
    },
  },
  shadow_rules: { action: 'DENY', policies: { 'ns[foo]-policy[dry]-rule[0]': { permissions: [{ url_path: { path: { exact: '/api/x' } } }], principals: [{ any: true }] } } },
  shadow_rules_stat_prefix: 'mesh_dry_run_deny_',
};

describe('proxy RBAC: explained decisions', () => {
  it('reports every policy with its first failing condition on a traced request, and the shadow engine apart', async () => {
    const filter = rbacHttpFilterFactory.create('envoy.filters.http.rbac', decoded(HTTP_RBAC_TYPE_URL, CONFIG), new TestContext());
    const trace: FilterReport[] = [];
    const req = { ...request({ method: 'POST', path: '/api/x', metadata: { [JWT]: { payload: { groups: ['dev'] } } } }), trace };
    const outcome = await filter.onRequest(req);
    expect(outcome).to.include({ kind: 'respond', status: 403 });
    const report = trace[0] as RbacReport;
    expect(report.type).to.equal('rbac');
    expect(report.enforced!.allowed).to.equal(false);
    expect(report.enforced!.policies).to.deep.equal([
      { name: 'ns[foo]-policy[api]-rule[0]', matched: false, reason: 'to: header {name:":method",string_match:{exact:"GET"}} did not match "POST"' },
      { name: 'ns[foo]-policy[api]-rule[1]', matched: false, reason: 'from: request.auth.claims[groups] {list_match:{one_of:{string_match:{exact:"admins"}}}} did not match ["dev"]' },
    ]);
    expect(report.shadow).to.deep.include({ action: 'DENY', allowed: false, policyId: 'ns[foo]-policy[dry]-rule[0]' });
  });

  it('names an excluded value (not_id) and a missing claim, and matches where all conditions hold', async () => {
    const filter = rbacHttpFilterFactory.create('envoy.filters.http.rbac', decoded(HTTP_RBAC_TYPE_URL, CONFIG), new TestContext());
    const excluded: FilterReport[] = [];
    await filter.onRequest({ ...request({ path: '/x', connection: { remoteAddress: '10.9.1.1' }, metadata: { [JWT]: { payload: { groups: ['admins'] } } } }), trace: excluded });
    expect((excluded[0] as RbacReport).enforced!.policies[1].reason).to.equal(
      'from: not(direct_remote_ip {address_prefix:"10.9.0.0",prefix_len:{value:16}} matched 10.9.1.1)',
    );
    const missing: FilterReport[] = [];
    await filter.onRequest({ ...request({ path: '/x' }), trace: missing });
    expect((missing[0] as RbacReport).enforced!.policies[1].reason).to.match(/did not match \(absent\)$/);
    const allowed: FilterReport[] = [];
    expect(await filter.onRequest({ ...request({ path: '/api/y' }), trace: allowed })).to.deep.equal({ kind: 'continue' });
    expect((allowed[0] as RbacReport).enforced).to.deep.include({ allowed: true, policyId: 'ns[foo]-policy[api]-rule[0]' });
  });

  it('writes the reasons to the debug log only when it is on; untraced requests carry no report', async () => {
    const quiet = new TestContext();
    await rbacHttpFilterFactory.create('rbac', decoded(HTTP_RBAC_TYPE_URL, CONFIG), quiet).onRequest(request({ path: '/nope' }));
    expect(quiet.logs.join('\n')).to.not.contain('did not match');
    const verbose = Object.assign(new TestContext(), { debugEnabled: () => true });
    const req = request({ path: '/nope' });
    await rbacHttpFilterFactory.create('rbac', decoded(HTTP_RBAC_TYPE_URL, CONFIG), verbose).onRequest(req);
    expect(req.trace).to.equal(undefined);
    expect(verbose.logs.join('\n')).to.contain('debug: rbac: enforced denied, matched policy none; ns[foo]-policy[api]-rule[0] did not match: to: url_path {path:{prefix:"/api/"}} did not match path "/nope"');
  });

  it('explains network RBAC on a connection the same way', () => {
    const config = { stat_prefix: 'tcp.', rules: { action: 'DENY', policies: { 'ns[foo]-policy[ip]-rule[0]': { permissions: [{ any: true }], principals: [{ direct_remote_ip: { address_prefix: '10.1.0.0', prefix_len: { value: 16 } } }] } } } };
    const filter = rbacNetworkFilterFactory.create('envoy.filters.network.rbac', decoded(NETWORK_RBAC_TYPE_URL, config), new TestContext());
    const trace: FilterReport[] = [];
    expect(filter.onConnection({ ...DEFAULT_CONNECTION, remoteAddress: '10.2.0.1' }, trace)).to.equal('continue');
    expect((trace[0] as RbacReport).enforced!.policies).to.deep.equal([
      { name: 'ns[foo]-policy[ip]-rule[0]', matched: false, reason: 'from: direct_remote_ip {address_prefix:"10.1.0.0",prefix_len:{value:16}} did not match 10.2.0.1' },
    ]);
  });
});
