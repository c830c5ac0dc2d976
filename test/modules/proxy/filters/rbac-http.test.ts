import { expect } from 'chai';
import * as protobuf from 'protobufjs';
import { FilterConfigError, HTTP_RBAC_METADATA, HTTP_RBAC_TYPE_URL, rbacHttpFilterFactory } from '../../../../src/modules/proxy/filters';
import type { HttpFilter } from '../../../../src/modules/proxy/http/filter-api';
import { decoded, request, RequestSpec, Respond, TestContext } from './support';

const URI_TEMPLATE = 'type.googleapis.com/envoy.extensions.path.match.uri_template.v3.UriTemplateMatchConfig';

/** A UriTemplateMatchConfig Any as bytes: what reaches the proxy when its proto set lacks the type. */
function uriTemplate(pathTemplate: string): Record<string, unknown> {
  const value = protobuf.Writer.create().uint32(10).string(pathTemplate).finish();
  return { name: 'uri-template', typed_config: { type_url: URI_TEMPLATE, value: Buffer.from(value) } };
}

function rbac(config: Record<string, unknown>, context = new TestContext()): HttpFilter {
  return rbacHttpFilterFactory.create('envoy.filters.http.rbac', decoded(HTTP_RBAC_TYPE_URL, config), context);
}

/** ALLOW with one policy: `permission` and `principal`. */
function allowIf(permission: Record<string, unknown>, principal: Record<string, unknown> = { any: true }): HttpFilter {
  return rbac({ rules: { action: 'ALLOW', policies: { p: { permissions: [permission], principals: [principal] } } } });
}

async function allows(filter: HttpFilter, spec: RequestSpec): Promise<boolean> {
  const outcome = await filter.onRequest(request(spec));
  if (outcome.kind === 'continue') return true;
  expect({ status: outcome.status, body: outcome.body }).to.deep.equal({ status: 403, body: 'RBAC: access denied' });
  return false;
}

/** Each case: a matcher, requests it must match, requests it must not. */
interface Case {
  name: string;
  matcher: Record<string, unknown>;
  yes: RequestSpec[];
  no: RequestSpec[];
}

async function check(filter: HttpFilter, c: Case): Promise<void> {
  for (const spec of c.yes) expect(await allows(filter, spec), `${c.name} should match ${JSON.stringify(spec)}`).to.equal(true);
  for (const spec of c.no) expect(await allows(filter, spec), `${c.name} should not match ${JSON.stringify(spec)}`).to.equal(false);
}

const h = (headers: Record<string, string>): RequestSpec => ({ headers });
const md = (metadata: Record<string, Record<string, unknown>>): RequestSpec => ({ metadata });
const payload = (claims: Record<string, unknown>): RequestSpec => md({ 'envoy.filters.http.jwt_authn': { payload: claims } });
const claim = (path: string[], value: Record<string, unknown>, invert = false) => ({
  metadata: { filter: 'envoy.filters.http.jwt_authn', path: ['payload', ...path].map((key) => ({ key })), value, invert },
});

const PERMISSIONS: Case[] = [
  { name: 'any', matcher: { any: true }, yes: [{}], no: [] },
  {
    name: 'header exact, ignore_case',
    matcher: { header: { name: ':authority', string_match: { exact: 'Example.COM', ignore_case: true } } },
    yes: [{}, h({ ':authority': 'EXAMPLE.com' })],
    no: [h({ ':authority': 'example.org' })],
  },
  {
    name: 'header prefix / suffix / contains / regex',
    matcher: {
      and_rules: {
        rules: [
          { header: { name: 'x-a', string_match: { prefix: 'pre-' } } },
          { header: { name: 'x-a', string_match: { suffix: '-suf' } } },
          { header: { name: 'x-a', string_match: { contains: 'mid' } } },
          { header: { name: 'x-a', string_match: { safe_regex: { regex: 'pre-[a-z]+-suf' } } } },
        ],
      },
    },
    yes: [h({ 'x-a': 'pre-mid-suf' })],
    no: [h({ 'x-a': 'pre-mid-suf-x' }), h({ 'x-a': 'pre-1mid-suf' }), {}],
  },
  {
    name: 'header present_match (true)',
    matcher: { header: { name: 'x-p', present_match: true } },
    yes: [h({ 'x-p': '' }), h({ 'x-p': 'v' })],
    no: [{}],
  },
  {
    name: 'header present_match false: matches only when absent',
    matcher: { header: { name: 'x-p', present_match: false } },
    yes: [{}],
    no: [h({ 'x-p': 'v' })],
  },
  {
    name: 'header invert_match: an absent header does not match an inverted value test',
    matcher: { header: { name: 'x-env', string_match: { exact: 'prod' }, invert_match: true } },
    yes: [h({ 'x-env': 'dev' })],
    no: [h({ 'x-env': 'prod' }), {}],
  },
  {
    name: 'header treat_missing_header_as_empty',
    matcher: { header: { name: 'x-env', string_match: { exact: '' }, treat_missing_header_as_empty: true } },
    yes: [{}, h({ 'x-env': '' })],
    no: [h({ 'x-env': 'prod' })],
  },
  {
    name: 'header legacy forms (exact_match, prefix_match, suffix_match, contains_match, safe_regex_match)',
    matcher: {
      and_rules: {
        rules: [
          { header: { name: ':method', exact_match: 'POST' } },
          { header: { name: 'x-a', prefix_match: 'ab' } },
          { header: { name: 'x-a', suffix_match: 'yz' } },
          { header: { name: 'x-a', contains_match: 'mm' } },
          { header: { name: 'x-a', safe_regex_match: { google_re2: {}, regex: '(?i)AB.*YZ' } } },
        ],
      },
    },
    yes: [{ method: 'POST', headers: { 'x-a': 'abmmyz' } }],
    no: [{ method: 'GET', headers: { 'x-a': 'abmmyz' } }, { method: 'POST', headers: { 'x-a': 'abyz' } }],
  },
  {
    name: 'header range_match [start, end)',
    matcher: { header: { name: 'x-n', range_match: { start: 10, end: 20 } } },
    yes: [h({ 'x-n': '10' }), h({ 'x-n': '19' })],
    no: [h({ 'x-n': '20' }), h({ 'x-n': '9' }), h({ 'x-n': '1e1' }), {}],
  },
  {
    name: 'url_path (query ignored)',
    matcher: { url_path: { path: { exact: '/admin' } } },
    yes: [{ path: '/admin' }, { path: '/admin?x=1' }],
    no: [{ path: '/admin/' }, { path: '/x?p=/admin' }],
  },
  {
    name: 'url_path prefix with ignore_case',
    matcher: { url_path: { path: { prefix: '/API/', ignore_case: true } } },
    yes: [{ path: '/api/v1' }],
    no: [{ path: '/apiv1' }],
  },
  {
    name: 'uri_template',
    matcher: { uri_template: uriTemplate('/books/{id}/pages/**') },
    yes: [{ path: '/books/42/pages/' }, { path: '/books/42/pages/7/notes?x=1' }],
    no: [{ path: '/books/42' }, { path: '/books/4/2/pages/1' }],
  },
  {
    name: 'matcher carrying a URI template',
    matcher: { matcher: uriTemplate('/files/*.pdf') },
    yes: [{ path: '/files/report.pdf' }],
    no: [{ path: '/files/a/report.pdf' }, { path: '/files/report.txt' }],
  },
  {
    name: 'destination_ip',
    matcher: { or_rules: { rules: [{ destination_ip: { address_prefix: '10.0.0.0', prefix_len: { value: 24 } } }, { destination_ip: { address_prefix: 'fd00::', prefix_len: { value: 16 } } }] } },
    yes: [{}, { connection: { localAddress: '::ffff:10.0.0.9' } }, { connection: { localAddress: 'fd00::1' } }],
    no: [{ connection: { localAddress: '10.0.1.5' } }, { connection: { localAddress: 'fe80::1' } }],
  },
  {
    name: 'destination_port',
    matcher: { destination_port: 8080 },
    yes: [{}],
    no: [{ connection: { localPort: 9090 } }],
  },
  {
    name: 'destination_port_range [start, end)',
    matcher: { destination_port_range: { start: 8000, end: 8081 } },
    yes: [{ connection: { localPort: 8000 } }, { connection: { localPort: 8080 } }],
    no: [{ connection: { localPort: 8081 } }, { connection: { localPort: 7999 } }],
  },
  {
    name: 'requested_server_name',
    matcher: { requested_server_name: { suffix: '.example.com' } },
    yes: [{ connection: { sni: 'api.example.com' } }],
    no: [{}, { connection: { sni: 'example.org' } }],
  },
  {
    name: 'not_rule',
    matcher: { not_rule: { url_path: { path: { prefix: '/private' } } } },
    yes: [{ path: '/public' }],
    no: [{ path: '/private/x' }],
  },
  {
    name: 'metadata string_match',
    matcher: claim(['iss'], { string_match: { exact: 'https://issuer' } }),
    yes: [payload({ iss: 'https://issuer' })],
    no: [payload({ iss: 'https://other' }), payload({}), {}, payload({ iss: ['https://issuer'] })],
  },
  {
    name: 'metadata list_match one_of (a list claim contains a value)',
    matcher: claim(['groups'], { list_match: { one_of: { string_match: { exact: 'admin' } } } }),
    yes: [payload({ groups: ['dev', 'admin'] })],
    no: [payload({ groups: ['dev'] }), payload({ groups: 'admin' }), payload({})],
  },
  {
    name: 'metadata or_match (string or list claim), nested path',
    matcher: claim(['org', 'team'], { or_match: { value_matchers: [{ list_match: { one_of: { string_match: { prefix: 'core' } } } }, { string_match: { prefix: 'core' } }] } }),
    yes: [payload({ org: { team: 'core-infra' } }), payload({ org: { team: ['x', 'core'] } })],
    no: [payload({ org: { team: 'edge' } }), payload({ org: 'core' }), payload({ team: 'core' })],
  },
  {
    name: 'metadata present_match',
    matcher: claim(['email'], { present_match: true }),
    yes: [payload({ email: 'a@b' }), payload({ email: null })],
    no: [payload({})],
  },
  {
    name: 'metadata bool_match',
    matcher: claim(['email_verified'], { bool_match: true }),
    yes: [payload({ email_verified: true })],
    no: [payload({ email_verified: false }), payload({ email_verified: 'true' })],
  },
  {
    name: 'metadata double_match exact and range',
    matcher: {
      or_rules: {
        rules: [claim(['level'], { double_match: { exact: 7 } }), claim(['level'], { double_match: { range: { start: 1, end: 3 } } })],
      },
    },
    yes: [payload({ level: 7 }), payload({ level: 2.5 }), payload({ level: 1 })],
    no: [payload({ level: 3 }), payload({ level: '7' })],
  },
  {
    name: 'metadata null_match',
    matcher: claim(['deleted'], { null_match: {} }),
    yes: [payload({ deleted: null })],
    no: [payload({}), payload({ deleted: false })],
  },
  {
    name: 'metadata invert',
    matcher: claim(['iss'], { string_match: { exact: 'bad' } }, true),
    yes: [payload({ iss: 'good' }), {}],
    no: [payload({ iss: 'bad' })],
  },
];

const PRINCIPALS: Case[] = [
  {
    name: 'authenticated principal_name',
    matcher: { authenticated: { principal_name: { exact: 'spiffe://cluster.local/ns/foo/sa/bar' } } },
    yes: [{ connection: { peerPrincipal: 'spiffe://cluster.local/ns/foo/sa/bar' } }],
    no: [{}, { connection: { peerPrincipal: 'spiffe://cluster.local/ns/foo/sa/baz' } }],
  },
  {
    name: 'authenticated without a name: any peer with a verified certificate',
    matcher: { authenticated: {} },
    yes: [{ connection: { peerPrincipal: 'spiffe://x/ns/a/sa/b' } }],
    no: [{}],
  },
  {
    name: 'not_id of authenticated matches a plaintext peer',
    matcher: { not_id: { authenticated: { principal_name: { safe_regex: { regex: '.*' } } } } },
    yes: [{}],
    no: [{ connection: { peerPrincipal: 'spiffe://x' } }],
  },
  {
    name: 'direct_remote_ip ignores x-forwarded-for',
    matcher: { direct_remote_ip: { address_prefix: '10.1.0.0', prefix_len: { value: 16 } } },
    yes: [{}, { headers: { 'x-forwarded-for': '192.168.0.1' } }],
    no: [{ connection: { remoteAddress: '10.2.0.1' }, headers: { 'x-forwarded-for': '10.1.0.1' } }],
  },
  {
    name: 'source_ip (deprecated) is the direct peer',
    matcher: { source_ip: { address_prefix: '10.1.2.3', prefix_len: { value: 32 } } },
    yes: [{ headers: { 'x-forwarded-for': '1.1.1.1' } }],
    no: [{ connection: { remoteAddress: '10.1.2.4' } }],
  },
  {
    name: 'remote_ip: the last x-forwarded-for address (Envoy default), else the direct peer',
    matcher: { remote_ip: { address_prefix: '172.16.0.0', prefix_len: { value: 12 } } },
    yes: [{ headers: { 'x-forwarded-for': '8.8.8.8, 172.16.5.5' } }, { connection: { remoteAddress: '172.20.0.1' } }],
    no: [{ headers: { 'x-forwarded-for': '172.16.5.5, 8.8.8.8' } }, {}, { connection: { remoteAddress: '172.20.0.1' }, headers: { 'x-forwarded-for': '9.9.9.9' } }],
  },
  {
    name: 'header',
    matcher: { header: { name: 'x-user', string_match: { exact: 'alice' } } },
    yes: [h({ 'x-user': 'alice' })],
    no: [h({ 'x-user': 'bob' }), {}],
  },
  {
    name: 'url_path',
    matcher: { url_path: { path: { suffix: '.json' } } },
    yes: [{ path: '/a.json?x' }],
    no: [{ path: '/a.xml' }],
  },
  {
    name: 'metadata (request principal iss/sub)',
    matcher: { and_ids: { ids: [claim(['iss'], { string_match: { exact: 'iss' } }), claim(['sub'], { string_match: { exact: 'sub' } })] } },
    yes: [payload({ iss: 'iss', sub: 'sub' })],
    no: [payload({ iss: 'iss', sub: 'other' }), {}],
  },
  {
    name: 'or_ids',
    matcher: { or_ids: { ids: [{ header: { name: 'x-a', present_match: true } }, { header: { name: 'x-b', present_match: true } }] } },
    yes: [h({ 'x-a': '1' }), h({ 'x-b': '1' })],
    no: [{}],
  },
];

describe('HTTP RBAC filter', () => {
  describe('permissions', () => {
    for (const c of PERMISSIONS) it(c.name, () => check(allowIf(c.matcher), c));
  });

  describe('principals', () => {
    for (const c of PRINCIPALS) it(c.name, () => check(allowIf({ any: true }, c.matcher), c));
  });

  it('reads a URI template given with @type, as decoded once the proto is loaded', async () => {
    const config = {
      rules: {
        policies: {
          p: {
            permissions: [{ uri_template: { name: 'u', typed_config: { '@type': URI_TEMPLATE, path_template: '/**/path/template' } } }],
            principals: [{ any: true }],
          },
        },
      },
    };
    const filter = rbacHttpFilterFactory.create('rbac', config, new TestContext());
    expect(await allows(filter, { path: '/a/b/path/template' })).to.equal(true);
    expect(await allows(filter, { path: '/path/template' })).to.equal(false);
  });

  describe('actions', () => {
    const policy = { permissions: [{ url_path: { path: { prefix: '/admin' } } }], principals: [{ any: true }] };

    it('ALLOW lets through only what a policy matches', async () => {
      const filter = rbac({ rules: { action: 'ALLOW', policies: { admin: policy } } });
      expect(await allows(filter, { path: '/admin/x' })).to.equal(true);
      expect(await allows(filter, { path: '/other' })).to.equal(false);
    });

    it('DENY answers 403 to what a policy matches', async () => {
      const filter = rbac({ rules: { action: 'DENY', policies: { admin: policy } } });
      const reply = (await filter.onRequest(request({ path: '/admin/x' }))) as Respond;
      expect(reply).to.deep.include({ kind: 'respond', status: 403, body: 'RBAC: access denied' });
      expect(await allows(filter, { path: '/other' })).to.equal(true);
    });

    it('LOG never denies and sets the access log hint', async () => {
      const filter = rbac({ rules: { action: 'LOG', policies: { admin: policy } } });
      const matched = request({ path: '/admin' });
      expect((await filter.onRequest(matched)).kind).to.equal('continue');
      expect(matched.metadata['envoy.common']).to.deep.equal({ access_log_hint: true });
      const other = request({ path: '/x' });
      expect((await filter.onRequest(other)).kind).to.equal('continue');
      expect(other.metadata['envoy.common']).to.deep.equal({ access_log_hint: false });
    });

    it('a policy needs a matching permission and a matching principal', async () => {
      const filter = allowIf({ url_path: { path: { exact: '/a' } } }, { header: { name: 'x-user', present_match: true } });
      expect(await allows(filter, { path: '/a', headers: { 'x-user': 'u' } })).to.equal(true);
      expect(await allows(filter, { path: '/a' })).to.equal(false);
      expect(await allows(filter, { path: '/b', headers: { 'x-user': 'u' } })).to.equal(false);
    });

    it('no rules allows everything; rules without policies allow nothing', async () => {
      expect(await allows(rbac({}), {})).to.equal(true);
      expect(await allows(rbac({ rules: {} }), {})).to.equal(false);
      expect(await allows(rbac({ rules: { action: 'DENY' } }), {})).to.equal(true);
    });
  });

  describe('shadow rules', () => {
    it('are evaluated and reported, never enforced', async () => {
      const context = new TestContext();
      const filter = rbac(
        {
          shadow_rules: { action: 'DENY', policies: { 'deny-all': { permissions: [{ any: true }], principals: [{ any: true }] } } },
          shadow_rules_stat_prefix: 'mesh_dry_run_allow_',
        },
        context,
      );
      const req = request();
      expect((await filter.onRequest(req)).kind).to.equal('continue');
      expect(req.metadata[HTTP_RBAC_METADATA]).to.deep.equal({
        mesh_dry_run_allow_shadow_engine_result: 'denied',
        mesh_dry_run_allow_shadow_effective_policy_id: 'deny-all',
      });
      expect(context.logs.join('\n')).to.match(/shadow denied, matched policy deny-all/);
    });

    it('run beside enforced rules, which alone decide', async () => {
      const filter = rbac({
        rules: { action: 'ALLOW', policies: { a: { permissions: [{ any: true }], principals: [{ any: true }] } } },
        shadow_rules: { action: 'ALLOW', policies: { none: { permissions: [{ not_rule: { any: true } }], principals: [{ any: true }] } } },
      });
      const req = request();
      expect((await filter.onRequest(req)).kind).to.equal('continue');
      expect(req.metadata[HTTP_RBAC_METADATA]).to.deep.equal({ shadow_engine_result: 'denied' });
    });
  });

  describe('config it cannot honour is refused, naming the field', () => {
    const refused = (config: Record<string, unknown>, field: RegExp) =>
      expect(() => rbac(config)).to.throw(FilterConfigError, field);
    const policyWith = (principal: Record<string, unknown>, permission: Record<string, unknown> = { any: true }) => ({
      rules: { policies: { 'p-1': { permissions: [permission], principals: [principal] } } },
    });

    it('filter_state principals', () =>
      refused(policyWith({ filter_state: { key: 'k', string_match: { exact: 'v' } } }), /envoy\.filters\.http\.rbac\.rules\.policies\["p-1"\]\.principals\[0\]\.filter_state: is not supported/));
    it('a permission with no rule set', () => refused(policyWith({ any: true }, {}), /policies\["p-1"\]\.permissions\[0\]: none of and_rules, or_rules, any/));
    it('the xDS matcher API', () => refused({ matcher: { matcher_list: { matchers: [] } } }, /envoy\.filters\.http\.rbac\.matcher: the xDS matcher API is not supported/));
    it('CEL conditions', () =>
      refused({ rules: { policies: { c: { permissions: [{ any: true }], principals: [{ any: true }], condition: { id: 1 } } } } }, /policies\["c"\]\.condition: CEL conditions/));
    it('a bad CIDR', () => refused(policyWith({ remote_ip: { address_prefix: 'ten', prefix_len: { value: 8 } } }), /principals\[0\]\.remote_ip\.address_prefix: "ten" is not an IP address/));
    it('a bad URI template', () => refused(policyWith({ any: true }, { uri_template: uriTemplate('/a/**/b/*') }), /permissions\[0\]\.uri_template\.typed_config\.path_template: path template "\/a\/\*\*\/b\/\*": no glob may follow "\*\*"/));
    it('a matcher extension other than a URI template', () =>
      refused(policyWith({ any: true }, { matcher: { name: 'x', typed_config: { type_url: 'type.googleapis.com/foo.Bar', value: Buffer.alloc(0) } } }), /permissions\[0\]\.matcher\.typed_config: type foo\.Bar is not supported/));
  });
});
