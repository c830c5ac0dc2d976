/**
 * Every regex a VirtualService carries is checked as RE2 (what Envoy and the built-in proxy
 * run), through the kind's validator and through `meshctl validate -f` on a real file.
 */
import { expect } from 'chai';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { KINDS, KindRegistry, parseConfigText } from '../../../src/modules/config';
import { runCli } from '../../helpers/run-cli';

const virtualService = (http: string) => `apiVersion: networking.mesh.io/v1
kind: VirtualService
metadata: { name: web, namespace: foo }
spec:
  hosts: [web.foo.svc.cluster.local]
  http:
${http}`;

/** One route per line of `matches`, each with the given match and a plain destination. */
const BAD = virtualService(`  - match: [{ uri: { regex: "/a(?<=x)" } }]
    route: [{ destination: { host: web } }]
  - match: [{ headers: { x-user: { regex: "(a)\\\\1" } } }]
    route: [{ destination: { host: web } }]
  - match: [{ queryParams: { q: { regex: "a++" } } }]
    route: [{ destination: { host: web } }]
  - match: [{ authority: { regex: "(?=web)" } }]
    route: [{ destination: { host: web } }]
  - corsPolicy: { allowOrigins: [{ regex: "https://[a-z]{1001}" }] }
    route: [{ destination: { host: web } }]
  - rewrite: { uriRegexRewrite: { match: "^/v1/(.*)$", rewrite: "/v2/\\\\2" } }
    route: [{ destination: { host: web } }]
  - rewrite: { uriRegexRewrite: { match: "\\\\C", rewrite: "/" } }
    route: [{ destination: { host: web } }]
`);

const EXPECTED: Array<[string, RegExp]> = [
  ['spec.http[0].match[0].uri.regex', /invalid RE2 regular expression: .*RE2 has no lookahead or lookbehind/],
  ['spec.http[1].match[0].headers.x-user.regex', /invalid RE2 regular expression: invalid escape sequence: `\\1` \(RE2 has no backreferences\)/],
  ['spec.http[2].match[0].queryParams.q.regex', /invalid RE2 regular expression: invalid nested repetition operator: `\+\+` \(RE2 has no possessive quantifiers\)/],
  ['spec.http[3].match[0].authority.regex', /invalid RE2 regular expression: .*lookahead/],
  ['spec.http[4].corsPolicy.allowOrigins[0].regex', /invalid RE2 regular expression: invalid repeat count: `\{1001\}`/],
  ['spec.http[5].rewrite.uriRegexRewrite.rewrite', /invalid RE2 rewrite: "\\2" names group 2, but the pattern has 1 capturing group/],
  ['spec.http[6].rewrite.uriRegexRewrite.match', /invalid RE2 regular expression: invalid escape sequence: `\\C`/],
];

/** RE2 syntax JavaScript's RegExp refuses: accepted. */
const GOOD = virtualService(`  - match: [{ uri: { regex: "(?i)/api/(?P<version>v[[:digit:]]+)/.*\\\\z" } }]
    route: [{ destination: { host: web } }]
  - rewrite: { uriRegexRewrite: { match: "^/old/(.*)$", rewrite: "/new/\\\\1" } }
    route: [{ destination: { host: web } }]
`);

describe('VirtualService regexes are validated as RE2', () => {
  const registry = new KindRegistry(KINDS);

  it('the kind validator refuses each regex RE2 refuses, naming the field and the RE2 error', () => {
    const parsed = parseConfigText('web.yaml', BAD, registry);
    expect(parsed.resources).to.have.length(0);
    expect(parsed.issues.map((i) => i.field)).to.deep.equal(EXPECTED.map(([field]) => field));
    EXPECTED.forEach(([, message], i) => expect(parsed.issues[i].message).to.match(message));
  });

  it('the kind validator accepts RE2 syntax JavaScript would refuse', () => {
    const parsed = parseConfigText('web.yaml', GOOD, registry);
    expect(parsed.issues.map((i) => `${i.field}: ${i.message}`)).to.deep.equal([]);
    expect(parsed.resources).to.have.length(1);
  });

  describe('meshctl validate -f', () => {
    let dir: string;
    before(() => {
      dir = fs.mkdtempSync(path.join(os.tmpdir(), 'mesh-re2-'));
      fs.writeFileSync(path.join(dir, 'bad.yaml'), BAD);
      fs.writeFileSync(path.join(dir, 'good.yaml'), GOOD);
    });
    after(() => fs.rmSync(dir, { recursive: true, force: true }));

    it('reports every regex RE2 refuses with file, line and field, exiting 1', async () => {
      const file = path.join(dir, 'bad.yaml');
      const r = await runCli('meshctl', ['validate', '-f', file]);
      expect(r.code, r.stderr).to.equal(1);
      const lines = BAD.split('\n');
      const lineOf = (needle: string) => lines.findIndex((l) => l.includes(needle)) + 1;
      expect(r.stderr).to.include(`${file}:${lineOf('(?<=x)')}: document 1 (VirtualService foo/web): spec.http[0].match[0].uri.regex: invalid RE2 regular expression:`);
      expect(r.stderr).to.include(`${file}:${lineOf('a++')}: document 1 (VirtualService foo/web): spec.http[2].match[0].queryParams.q.regex:`);
      for (const [field, message] of EXPECTED) expect(r.stderr).to.match(new RegExp(`${escape(field)}: ${message.source}`));
      expect(r.stderr).to.match(/Error: 7 problems found/);
    });

    it('accepts RE2 syntax JavaScript would refuse, exiting 0', async () => {
      const r = await runCli('meshctl', ['validate', '-f', path.join(dir, 'good.yaml')]);
      expect(r.code, r.stderr).to.equal(0);
      expect(r.stdout).to.include('good.yaml" is valid (1 resource)');
    });
  });
});

function escape(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}
