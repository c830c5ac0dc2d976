import { expect } from 'chai';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { AuthorizationPolicyKind } from '../../../src/modules/config/kinds/authorization-policy';
import { PeerAuthenticationKind } from '../../../src/modules/config/kinds/peer-authentication';
import { RequestAuthenticationKind } from '../../../src/modules/config/kinds/request-authentication';
import { ConfigIssue } from '../../../src/modules/config/issues';
import { parseConfigText, ParseResult } from '../../../src/modules/config/parse';
import { KindRegistry } from '../../../src/modules/config/validate';
import { REPO_ROOT } from '../../helpers/run-cli';

const kinds = new KindRegistry([RequestAuthenticationKind, AuthorizationPolicyKind, PeerAuthenticationKind]);
const parse = (text: string): ParseResult => parseConfigText('policy.yaml', text, kinds);

/** 1-based line of the first line containing `marker` (after `after`, when given). */
function lineOf(text: string, marker: string, after = ''): number {
  const lines = text.split('\n');
  const start = after ? lines.findIndex((l) => l.includes(after)) : 0;
  const i = lines.findIndex((l, n) => n >= start && l.includes(marker));
  if (i < 0) throw new Error(`marker ${marker} not in text`);
  return i + 1;
}

/** The only issue of a result, which must have exactly one. */
function only(result: ParseResult): ConfigIssue {
  expect(result.issues.map((i) => `${i.field}: ${i.message}`), 'issues').to.have.length(1);
  return result.issues[0];
}

function expectIssue(text: string, field: string, marker: string, message?: RegExp): void {
  const issue = only(parse(text));
  expect(issue.field).to.equal(field);
  expect(issue.location.line, `line of ${field}`).to.equal(lineOf(text, marker));
  if (message) expect(issue.message).to.match(message);
}

const head = (kind: string, version = 'v1') => `apiVersion: security.mesh.io/${version}\nkind: ${kind}\nmetadata:\n  name: p\n  namespace: foo\nspec:\n`;
const ra = (spec: string) => head('RequestAuthentication') + spec;
const ap = (spec: string) => head('AuthorizationPolicy') + spec;
const pa = (spec: string) => head('PeerAuthentication') + spec;

const JWKS = JSON.stringify({ keys: [{ kty: 'RSA', e: 'AQAB', n: 'xyz', kid: 'k1' }] });

describe('security.mesh.io kinds', () => {
  describe('RequestAuthentication', () => {
    it('accepts every field', () => {
      const text = ra(`  selector:
    matchLabels:
      app: httpbin
  jwtRules:
  - issuer: https://issuer.example.com
    audiences: [api, web]
    jwksUri: https://issuer.example.com/.well-known/jwks.json
    fromHeaders:
    - name: Authorization
      prefix: "Bearer "
    - name: x-jwt
    fromParams: [access_token]
    fromCookies: [session]
    outputPayloadToHeader: x-jwt-payload
    forwardOriginalToken: true
    outputClaimToHeaders:
    - header: x-sub
      claim: sub
    timeout: 5s
  - issuer: inline-issuer
    jwks: '${JWKS}'
  - issuer: https://issuer.example.com
    jwksUri: http://other.example.com:8080/keys
`);
      const result = parse(text);
      expect(result.issues).to.deep.equal([]);
      const spec = result.resources[0].resource.spec as { jwtRules: { fromHeaders?: { prefix?: string }[]; timeout?: string }[] };
      expect(spec.jwtRules).to.have.length(3); // a repeated issuer is accepted, as by the incumbent
      expect(spec.jwtRules[0].fromHeaders?.[0].prefix).to.equal('Bearer ');
    });

    it('accepts both API versions and a targetRef instead of a selector', () => {
      const text = head('RequestAuthentication', 'v1beta1') + `  targetRef:
    kind: Gateway
    group: gateway.networking.k8s.io
    name: ingress
  jwtRules:
  - jwksUri: https://keys.example.com/jwks.json
`;
      expect(parse(text).issues).to.deep.equal([]);
    });

    it('reports issuer missing without jwksUri', () => {
      // An absent field has no line of its own: parse.ts then gives the document's first line.
      expectIssue(ra('  jwtRules:\n  - audiences: [a]\n'), 'spec.jwtRules[0].issuer', 'apiVersion:', /required/);
    });

    it('reports a non-http(s) jwksUri', () => {
      const text = ra('  jwtRules:\n  - issuer: i\n    jwksUri: ftp://keys.example.com/jwks\n');
      expectIssue(text, 'spec.jwtRules[0].jwksUri', 'jwksUri:', /scheme "ftp"/);
      expectIssue(ra('  jwtRules:\n  - issuer: i\n    jwksUri: not a url\n'), 'spec.jwtRules[0].jwksUri', 'jwksUri:');
    });

    it('reports jwks that is not a JSON key set, and jwks with jwksUri', () => {
      expectIssue(ra(`  jwtRules:\n  - issuer: i\n    jwks: '{"keys": '\n`), 'spec.jwtRules[0].jwks', 'jwks:', /not valid JSON/);
      expectIssue(ra(`  jwtRules:\n  - issuer: i\n    jwks: '{"kty": "RSA"}'\n`), 'spec.jwtRules[0].jwks', 'jwks:', /keys/);
      const both = ra(`  jwtRules:\n  - issuer: i\n    jwksUri: https://k.example.com/\n    jwks: '${JWKS}'\n`);
      expectIssue(both, 'spec.jwtRules[0].jwks', 'jwks:', /jwksUri/);
    });

    it('reports selector together with targetRef(s)', () => {
      const text = ra(`  selector:\n    matchLabels:\n      app: a\n  targetRefs:\n  - kind: Service\n    name: a\n`);
      // A block value's line is that of its first entry.
      expectIssue(text, 'spec.targetRefs', '- kind: Service', /only one of/);
    });

    it('reports bad targetRefs: cross-namespace, untargetable kinds, missing name', () => {
      expectIssue(ra(`  targetRef:\n    kind: Service\n    name: a\n    namespace: bar\n`), 'spec.targetRef.namespace', 'namespace: bar');
      expectIssue(ra(`  targetRefs:\n  - kind: Service\n    name: a\n  - kind: Pod\n    name: b\n`), 'spec.targetRefs[1].kind', 'kind: Pod');
      expectIssue(ra(`  targetRef:\n    kind: Service\n    name: ""\n`), 'spec.targetRef.name', 'name: ""');
    });

    it('reports bad timeouts, empty header names, params, cookies and audiences', () => {
      expectIssue(ra('  jwtRules:\n  - issuer: i\n    timeout: 5 seconds\n'), 'spec.jwtRules[0].timeout', 'timeout:', /duration/);
      expectIssue(ra('  jwtRules:\n  - issuer: i\n    timeout: 500us\n'), 'spec.jwtRules[0].timeout', 'timeout:', /1ms/);
      expectIssue(ra('  jwtRules:\n  - issuer: i\n    fromHeaders:\n    - name: ""\n'), 'spec.jwtRules[0].fromHeaders[0].name', '- name');
      expectIssue(ra('  jwtRules:\n  - issuer: i\n    fromParams:\n    - t\n    - ""\n'), 'spec.jwtRules[0].fromParams[1]', '- ""');
      expectIssue(ra('  jwtRules:\n  - issuer: i\n    fromCookies:\n    - ""\n'), 'spec.jwtRules[0].fromCookies[0]', '- ""');
      expectIssue(ra('  jwtRules:\n  - issuer: i\n    audiences:\n    - ""\n'), 'spec.jwtRules[0].audiences[0]', '- ""');
      const claim = ra('  jwtRules:\n  - issuer: i\n    outputClaimToHeaders:\n    - header: "bad header"\n      claim: sub\n');
      expectIssue(claim, 'spec.jwtRules[0].outputClaimToHeaders[0].header', 'header:', /header name/);
    });

    it('reports unknown fields and wrong types where they are', () => {
      expectIssue(ra('  jwtRules:\n  - issuer: i\n    jwks_url: x\n'), 'spec.jwtRules[0].jwks_url', 'jwks_url', /unknown field/);
      expectIssue(ra('  jwtRules:\n  - issuer: i\n    forwardOriginalToken: "yes"\n'), 'spec.jwtRules[0].forwardOriginalToken', 'forwardOriginalToken');
      expectIssue(ra('  selector:\n    matchLabels:\n      app: "*"\n'), 'spec.selector.matchLabels.app', 'app:', /wildcard/);
    });
  });

  describe('AuthorizationPolicy', () => {
    it('accepts every field', () => {
      const text = ap(`  selector:
    matchLabels:
      app: httpbin
  action: ALLOW
  rules:
  - from:
    - source:
        principals: [cluster.local/ns/default/sa/sleep]
        notPrincipals: [cluster.local/ns/default/sa/evil]
        requestPrincipals: ["issuer.example.com/*"]
        notRequestPrincipals: [bad/user]
        namespaces: [default]
        notNamespaces: [kube-system]
        ipBlocks: [10.0.0.0/8, 192.168.1.1]
        notIpBlocks: ["2001:db8::/32"]
        remoteIpBlocks: [203.0.113.7]
        notRemoteIpBlocks: [198.51.100.0/24]
    - source:
        serviceAccounts: [default/sleep]
        notServiceAccounts: [default/evil]
    to:
    - operation:
        hosts: [httpbin.example.com]
        notHosts: ["*.internal"]
        ports: ["8080"]
        notPorts: ["9090"]
        methods: [GET, POST]
        notMethods: [DELETE]
        paths: [/api/*, "/v1/{*}/items", "/files/{**}", /exact]
        notPaths: ["*/admin", "/{*}/secret"]
    when:
    - key: request.headers[x-user]
      values: [alice]
    - key: request.auth.claims[groups]
      values: [admins]
    - key: request.auth.claims[realm_access][roles]
      notValues: [guest]
    - key: source.ip
      values: [10.1.0.0/16]
    - key: remote.ip
      notValues: [1.2.3.4]
    - key: source.namespace
      values: [default]
    - key: source.principal
      values: [cluster.local/ns/default/sa/sleep]
    - key: request.auth.principal
      values: [iss/sub]
    - key: request.auth.audiences
      values: [api]
    - key: request.auth.presenter
      values: [client]
    - key: destination.ip
      values: [10.0.0.1]
    - key: destination.port
      values: ["443"]
    - key: connection.sni
      values: [www.example.com]
    - key: experimental.envoy.filters.network.mysql_proxy[db.table]
      values: ["[update]"]
`);
      expect(parse(text).issues).to.deep.equal([]);
    });

    it('accepts CUSTOM with a provider, DENY with an empty rule, AUDIT and targetRefs', () => {
      const text = ap(`  action: CUSTOM
  provider:
    name: ext-authz
  rules:
  - to:
    - operation:
        paths: [/admin/*]
---
${ap('  action: DENY\n  rules:\n  - {}\n')}---
${ap('  action: AUDIT\n  targetRefs:\n  - kind: Service\n    name: reviews\n  - kind: ServiceEntry\n    group: networking.mesh.io\n    name: ext\n  rules:\n  - {}\n')}---
${ap('  {}\n')}`);
      const result = parse(text);
      expect(result.issues).to.deep.equal([]);
      expect(result.resources).to.have.length(4);
    });

    it('reports bad IP blocks and ports, with the list index', () => {
      const ips = ap('  rules:\n  - from:\n    - source:\n        ipBlocks:\n        - 10.0.0.0/8\n        - 10.0.0.0/33\n');
      expectIssue(ips, 'spec.rules[0].from[0].source.ipBlocks[1]', '10.0.0.0/33', /CIDR/);
      const remote = ap('  rules:\n  - from:\n    - source:\n        remoteIpBlocks: [1.2.3]\n');
      expectIssue(remote, 'spec.rules[0].from[0].source.remoteIpBlocks[0]', 'remoteIpBlocks');
      for (const bad of ['"0"', '"65536"', '"http"', '"-1"']) {
        const text = ap(`  rules:\n  - to:\n    - operation:\n        methods: [GET]\n    - operation:\n        notPorts:\n        - ${bad}\n`);
        expectIssue(text, 'spec.rules[0].to[1].operation.notPorts[0]', `- ${bad}`, /port number/);
      }
    });

    // `{**}` before the end is accepted: the incumbent's conformance cases use `/{**}/path/template`.
    it('reports path templates outside whole segments', () => {
      const bad = ['/a/{*}.txt', '/{*}/{name}', '/a/*/{*}', '/{*}/b*'];
      for (const p of bad) {
        const text = ap(`  rules:\n  - to:\n    - operation:\n        methods: [GET]\n    - operation:\n        paths:\n        - /ok\n        - /x\n        - "${p}"\n`);
        expectIssue(text, 'spec.rules[0].to[1].operation.paths[2]', `"${p}"`, /\{\*\}|\{\*\*\}/);
      }
    });

    it('reports unsupported when keys and keys without values', () => {
      for (const key of ['request.header[x]', 'request.headers', 'source.user', 'destination.labels[app]', 'request.auth.claims[]', 'experimental.envoy.filters.x']) {
        const text = ap(`  rules:\n  - when:\n    - key: source.ip\n      values: [1.2.3.4]\n    - key: "${key}"\n      values: [v]\n`);
        expectIssue(text, 'spec.rules[0].when[1].key', `"${key}"`);
      }
      const noValues = ap('  rules:\n  - when:\n    - key: request.headers[x]\n');
      expectIssue(noValues, 'spec.rules[0].when[0]', '- key', /values or notValues/);
      const badIp = ap('  rules:\n  - when:\n    - key: destination.ip\n      notValues:\n      - 10.0.0.1\n      - nope\n');
      expectIssue(badIp, 'spec.rules[0].when[0].notValues[1]', '- nope');
      const badPort = ap('  rules:\n  - when:\n    - key: destination.port\n      values: ["80a"]\n');
      expectIssue(badPort, 'spec.rules[0].when[0].values[0]', 'values:');
    });

    it('reports empty strings in source and operation lists', () => {
      for (const field of ['principals', 'notPrincipals', 'requestPrincipals', 'notRequestPrincipals', 'namespaces', 'notNamespaces']) {
        const text = ap(`  rules:\n  - from:\n    - source:\n        ${field}:\n        - a\n        - ""\n`);
        expectIssue(text, `spec.rules[0].from[0].source.${field}[1]`, '- ""', /empty/);
      }
      for (const field of ['hosts', 'methods', 'paths', 'notHosts']) {
        const text = ap(`  rules:\n  - to:\n    - operation:\n        ${field}: [""]\n`);
        expectIssue(text, `spec.rules[0].to[0].operation.${field}[0]`, `${field}:`, /empty/);
      }
    });

    it('reports empty from/to, missing source/operation and empty source', () => {
      expectIssue(ap('  rules:\n  - from: []\n'), 'spec.rules[0].from', 'from:');
      expectIssue(ap('  rules:\n  - to: []\n'), 'spec.rules[0].to', 'to:');
      expectIssue(ap('  rules:\n  - from:\n    - {}\n'), 'spec.rules[0].from[0]', '- {}');
      expectIssue(ap('  rules:\n  - to:\n    - operation: {}\n'), 'spec.rules[0].to[0].operation', 'operation:');
      expectIssue(ap('  rules:\n  - from:\n    - source:\n        principals: [a]\n        serviceAccounts: [ns/sa]\n'), 'spec.rules[0].from[0].source.serviceAccounts', 'serviceAccounts');
      expectIssue(ap('  rules:\n  - from:\n    - source:\n        serviceAccounts: [a/b/c]\n'), 'spec.rules[0].from[0].source.serviceAccounts[0]', 'serviceAccounts');
    });

    it('reports action/provider mismatches', () => {
      expectIssue(ap('  action: CUSTOM\n  rules:\n  - {}\n'), 'spec.action', 'action:', /provider/);
      expectIssue(ap('  action: CUSTOM\n  provider:\n    name: ""\n  rules:\n  - {}\n'), 'spec.provider.name', 'name: ""');
      expectIssue(ap('  action: DENY\n  provider:\n    name: ext\n  rules:\n  - {}\n'), 'spec.provider', 'name: ext', /CUSTOM/);
      expectIssue(ap('  provider:\n    name: ext\n'), 'spec.provider', 'name: ext', /ALLOW/);
      expectIssue(ap('  action: DENY\n'), 'spec.action', 'action:', /empty rule/);
      expectIssue(ap('  action: REJECT\n'), 'spec.action', 'action:');
      const custom = ap('  action: CUSTOM\n  provider:\n    name: ext\n  rules:\n  - from:\n    - source:\n        principals: [a]\n');
      expectIssue(custom, 'spec.rules[0].from[0].source.principals', 'principals', /CUSTOM/);
      const customWhen = ap('  action: CUSTOM\n  provider:\n    name: ext\n  rules:\n  - when:\n    - key: request.auth.claims[iss]\n      values: [x]\n');
      expectIssue(customWhen, 'spec.rules[0].when[0].key', 'key:', /CUSTOM/);
    });

    it('reports unknown fields inside rules', () => {
      expectIssue(ap('  rules:\n  - to:\n    - operation:\n        method: [GET]\n'), 'spec.rules[0].to[0].operation.method', 'method:', /unknown field/);
    });
  });

  describe('PeerAuthentication', () => {
    it('accepts every field', () => {
      const text = pa(`  selector:
    matchLabels:
      app: reviews
  mtls:
    mode: STRICT
  portLevelMtls:
    8080:
      mode: DISABLE
    "9090":
      mode: PERMISSIVE
    9091:
      mode: UNSET
`);
      expect(parse(text).issues).to.deep.equal([]);
      expect(parse(pa('  mtls:\n    mode: PERMISSIVE\n')).issues).to.deep.equal([]);
      expect(parse(pa('  {}\n')).issues).to.deep.equal([]);
    });

    it('reports bad modes, bad port keys, and port-level mTLS without a selector', () => {
      expectIssue(pa('  mtls:\n    mode: MUTUAL\n'), 'spec.mtls.mode', 'mode:');
      const sel = '  selector:\n    matchLabels:\n      app: a\n';
      expectIssue(pa(`${sel}  portLevelMtls:\n    0:\n      mode: STRICT\n`), 'spec.portLevelMtls.0', 'mode: STRICT', /port number/);
      expectIssue(pa(`${sel}  portLevelMtls:\n    70000:\n      mode: STRICT\n`), 'spec.portLevelMtls.70000', 'mode: STRICT');
      expectIssue(pa(`${sel}  portLevelMtls:\n    http:\n      mode: STRICT\n`), 'spec.portLevelMtls.http', 'mode: STRICT');
      expectIssue(pa(`${sel}  portLevelMtls:\n    8080:\n      mode: ON\n`), 'spec.portLevelMtls.8080.mode', 'mode: ON');
      expectIssue(pa(`${sel}  portLevelMtls:\n    8080:\n      tls: STRICT\n`), 'spec.portLevelMtls.8080.tls', 'tls: STRICT', /unknown field/);
      expectIssue(pa('  mtls:\n    mode: STRICT\n  portLevelMtls:\n    8080:\n      mode: DISABLE\n'), 'spec.portLevelMtls', '8080:', /selector/);
      expectIssue(pa(`${sel}  portLevelMtls: {}\n`), 'spec.portLevelMtls', 'portLevelMtls:');
    });
  });

  it('rejects a bad document alone in a multi-document file', () => {
    const text = [
      ra('  jwtRules:\n  - issuer: good\n'),
      ap('  rules:\n  - to:\n    - operation:\n        ports: ["99999"]\n'),
      pa('  mtls:\n    mode: STRICT\n'),
      'apiVersion: networking.mesh.io/v1\nkind: AuthorizationPolicy\nmetadata:\n  name: wrong-group\nspec: {}\n',
      ap('  action: DENY\n  rules:\n  - from:\n    - source:\n        notNamespaces: [prod]\n'),
    ].join('---\n');
    const result = parse(text);
    expect(result.resources.map((r) => `${r.resource.kind}@${r.location.documentIndex}`)).to.deep.equal([
      'RequestAuthentication@0',
      'PeerAuthentication@2',
      'AuthorizationPolicy@4',
    ]);
    expect(result.issues.map((i) => [i.location.documentIndex, i.field, i.location.line])).to.deep.equal([
      [1, 'spec.rules[0].to[0].operation.ports[0]', lineOf(text, 'ports:')],
      [3, 'apiVersion', lineOf(text, 'name: wrong-group') - 3],
    ]);
  });

  describe('conformance fixtures (test/fixtures/conformance/authz/*-in.yaml)', () => {
    const dir = path.join(REPO_ROOT, 'test', 'fixtures', 'conformance', 'authz');
    const files = fs.existsSync(dir)
      ? fs.readdirSync(dir, { recursive: true, encoding: 'utf8' }).filter((f) => f.endsWith('-in.yaml')).sort()
      : [];
    if (files.length === 0) it('are not present yet');
    for (const file of files) {
      it(`parses ${file} without issues`, () => {
        const result = parseConfigText(file, fs.readFileSync(path.join(dir, file), 'utf8'), kinds);
        expect(result.issues.map((i) => `${i.field}: ${i.message}`)).to.deep.equal([]);
      });
    }
  });
});
