import { expect } from 'chai';
import { compileRegexMatcher, compileRegexSubstitution, fullMatchRegex } from '../../../../src/modules/proxy/filters/matchers/regex';
import { compileStringMatcher } from '../../../../src/modules/proxy/filters/matchers/string-matcher';
import { RouteTable } from '../../../../src/modules/proxy/http/routing';

describe('the built-in proxy runs regexes as RE2', () => {
  it('matches the whole value with RE2 syntax (no JavaScript rewriting)', () => {
    expect(fullMatchRegex('ab|cd', 'f').test('abcd')).to.equal(false);
    expect(fullMatchRegex('(?P<n>[[:digit:]]+)-[[:alpha:]]+', 'f').test('42-ab')).to.equal(true);
    expect(fullMatchRegex('x(?i)y\\z', 'f').test('xY')).to.equal(true);
    expect(compileStringMatcher({ safe_regex: { regex: '\\Aspiffe://[^/]+/ns/[[:lower:]]+/.*' } }, 'm')('spiffe://td/ns/foo/sa/x')).to.equal(true);
  });

  it('names the field when RE2 refuses a pattern', () => {
    expect(() => fullMatchRegex('a(', 'x.safe_regex.regex')).to.throw(/^x\.safe_regex\.regex: regex "a\(" does not compile as RE2: missing closing \)/);
    expect(() => compileRegexMatcher({ regex: '(?<=a)b' }, 'rbac.header.safe_regex_match')).to.throw(
      /^rbac\.header\.safe_regex_match\.regex: regex "\(\?<=a\)b" does not compile as RE2: .*lookbehind/,
    );
    expect(() => compileRegexMatcher({ regex: '' }, 'm')).to.throw(/^m\.regex: must not be empty/);
  });

  it('rewrites with regex_rewrite as RE2::GlobalReplace does, naming the field of a bad pattern', () => {
    const rewrite = compileRegexSubstitution({ pattern: { regex: '^/api/v([0-9]+)/(.*)$' }, substitution: '/\\2?version=\\1' }, 'r');
    expect(rewrite('/api/v2/items')).to.equal('/items?version=2');
    expect(() => compileRegexSubstitution({ pattern: { regex: '(a)\\1' }, substitution: '' }, 'route.regex_rewrite')).to.throw(
      /^route\.regex_rewrite\.pattern\.regex: regex "\(a\)\\\\1" does not compile as RE2: .*backreferences/,
    );
  });

  it('refuses a route table with a bad regex_rewrite, naming the route (so the proxy NACKs it)', () => {
    const table = (regex: string) =>
      new RouteTable({
        name: '8080',
        virtual_hosts: [{ name: 'web', domains: ['*'], routes: [{ match: { prefix: '/' }, route: { cluster: 'c', regex_rewrite: { pattern: { regex }, substitution: 'x' } } }] }],
      });
    expect(() => table('a++')).to.throw(/^route configuration 8080: virtual_hosts\[0\]\.routes\[0\]\.route\.regex_rewrite\.pattern\.regex: .*possessive/);
    expect(() => table('a+')).to.not.throw();
  });

  it('selects routes by safe_regex on the path without query', () => {
    const table = new RouteTable({
      name: '80',
      virtual_hosts: [{
        name: 'web', domains: ['*'],
        routes: [
          { name: 'numbers', match: { safe_regex: { regex: '/[[:digit:]]+' } }, route: { cluster: 'n' } },
          { name: 'rest', match: { prefix: '/' }, route: { cluster: 'r' } },
        ],
      }],
    });
    const routeOf = (path: string) => table.select({ method: 'GET', path, headers: { host: 'web' } })?.route.name;
    expect(routeOf('/42?x=1')).to.equal('numbers');
    expect(routeOf('/42a')).to.equal('rest');
  });
});
