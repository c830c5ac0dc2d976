/**
 * The built-in proxy's request path handling, step by step and as a whole, in Envoy's order
 * and semantics. Expected values are Envoy's documented outputs (its path utility tests and
 * the incumbent's path normalization tests), written out here, not computed.
 */
import { expect } from 'chai';
import {
  canonicalPath, EscapedSlashesAction, mergeSlashes, normalizeRequestPath, PathNormalization, pathNormalizationOf, unescapeSlashes,
} from '../../../src/modules/proxy/http/path-normalization';
import { HCM_TYPE } from '../../../src/modules/proxy/http/filter-registry';
import { decoded } from './filters/support';

const BASE: PathNormalization = { normalizePath: true, mergeSlashes: false, escapedSlashes: 'KEEP_UNCHANGED', stripFragmentFromPath: true };
const outcome = (path: string, options: Partial<PathNormalization> = {}) => normalizeRequestPath(path, { ...BASE, ...options });
const forwarded = (path: string, options: Partial<PathNormalization> = {}): string => {
  const result = outcome(path, options);
  expect(result.kind, `${path} should be forwarded`).to.equal('forward');
  return (result as { path: string }).path;
};

describe('built-in proxy: request path normalization', () => {
  describe('normalize_path (RFC 3986, as Envoy canonicalizes)', () => {
    const cases: Array<[string, string, string]> = [
      ['/xyz', '/xyz', 'already normal'],
      ['/a/b/../c', '/a/c', 'parent segment'],
      ['/a/b/./c', '/a/b/c', 'current segment'],
      ['a/b/../c', '/a/c', 'no leading slash'],
      ['/a/b/../../../../c', '/c', 'more parents than segments stop at the root'],
      ['/a/b/%2E%2E/c', '/a/c', 'upper-case encoded dots'],
      ['/a/b/%2e%2e/c', '/a/c', 'lower-case encoded dots'],
      ['/a/%2e/c', '/a/c', 'encoded current segment'],
      ['/a/.%2E/c', '/c', 'mixed raw and encoded dots'],
      ['/a/b/..', '/a/', 'trailing parent segment'],
      ['/a/b/.', '/a/b/', 'trailing current segment'],
      ['/a/..\\c', '/c', 'backslash after dots'],
      ['/a\\b', '/a/b', 'backslash is a slash'],
      ['/%73ecret', '/secret', 'encoded unreserved letter'],
      ['/%41%7a%30%2D%5F%7E', '/Az0-_~', 'every unreserved class'],
      ['/A/B/C', '/A/B/C', 'case kept'],
      ['/a/%2F%2f/c', '/a/%2F%2f/c', 'escaped slashes kept as written'],
      ['/%5c%25', '/%5c%25', 'reserved escapes kept'],
      ['/%c0%af', '/%c0%af', 'non-ASCII escapes kept'],
      ['/%252e%252e/x', '/%252e%252e/x', 'double encoding is not decoded (%25 is not unreserved)'],
      ['/xyz%30..//abc', '/xyz0..//abc', 'dots inside a name are a name'],
      ['/a b"<>`{|}^', '/a%20b%22%3C%3E%60%7B%7C%7D%5E', 'characters not allowed raw are escaped'],
      ['/a%zz%', '/a%zz%', 'a stray % is kept'],
      ['/a%%30%30', '/a%2500', 'nested escapes cannot form a new escape'],
      ['/a;b=c/d', '/a;b=c/d', 'path parameters kept'],
      ['/xyz/..;foo=bar/abc', '/abc', 'a parameter does not hide a parent segment'],
      ['/xyz/.;foo=bar/abc', '/xyz/abc', 'nor a current segment'],
      ['/xyz/..;foo=bar/.;fff=zzz/remain;blah-bluh?query', '/remain;blah-bluh?query', 'mixed'],
      ['/a//b', '/a//b', 'slashes are not merged by normalize_path'],
      ['', '/', 'empty path'],
    ];
    for (const [input, expected, what] of cases) {
      it(`${what}: ${JSON.stringify(input)} → ${JSON.stringify(expected)}`, () => expect(canonicalPath(input)).to.equal(expected));
    }

    it('keeps the query string exactly as received', () => {
      expect(canonicalPath('/a/../b?x=/../%2e%2E&y=%73#z')).to.equal('/b?x=/../%2e%2E&y=%73#z');
      expect(forwarded('/a/./b?q=a//b&r=..')).to.equal('/a/b?q=a//b&r=..');
    });

    it('rejects (400) a NUL, raw or encoded, as Envoy does', () => {
      for (const invalid of ['/xyz/.%00../abc', '/xyz/%00.%00./abc', '/xyz/AAAAA%%0000/abc', '/a\u0000b']) {
        expect(canonicalPath(invalid), invalid).to.equal(undefined);
        expect(outcome(invalid), invalid).to.deep.equal({ kind: 'reject', reason: 'path normalization failed' });
      }
    });

    it('leaves the path alone when off', () => {
      expect(forwarded('/a/../b/%73', { normalizePath: false })).to.equal('/a/../b/%73');
      expect(forwarded('/a\u0000b', { normalizePath: false })).to.equal('/a\u0000b');
    });
  });

  describe('merge_slashes', () => {
    const cases: Array<[string, string]> = [
      ['/a//b/c', '/a/b/c'],
      ['//a/b/c', '/a/b/c'],
      ['/a/b/c//', '/a/b/c/'],
      ['/a////b/c', '/a/b/c'],
      ['/a//b?a=///c', '/a/b?a=///c'],
      ['/a//b?', '/a/b?'],
      ['//a/?b', '/a/?b'],
      ['/a', '/a'],
    ];
    for (const [input, expected] of cases) it(`${input} → ${expected}`, () => expect(mergeSlashes(input)).to.equal(expected));

    it('runs after normalize_path, so a backslash turned slash merges too', () => {
      expect(forwarded('/app/\\/\\/\\admin', { mergeSlashes: true })).to.equal('/app/admin');
      expect(forwarded('/app//../admin', { mergeSlashes: true })).to.equal('/app/admin');
      expect(forwarded('/app//../../admin', { mergeSlashes: true })).to.equal('/admin');
      expect(forwarded('/app//', { mergeSlashes: false })).to.equal('/app//');
    });
  });

  describe('path_with_escaped_slashes_action', () => {
    it('unescapes %2F, %2f, %5C, %5c before the query only, and says whether it found any', () => {
      expect(unescapeSlashes('/a%2Fb%2fc%5Cd%5ce?x=%2F')).to.deep.equal({ path: '/a/b/c\\d\\e?x=%2F', found: true });
      expect(unescapeSlashes('/a%2bb%2')).to.deep.equal({ path: '/a%2bb%2', found: false });
      expect(unescapeSlashes('%%2fa/')).to.deep.equal({ path: '%/a/', found: true });
      expect(unescapeSlashes('/a?%2f')).to.deep.equal({ path: '/a?%2f', found: false });
    });

    const path = '/%5Capp%2f%5c%2F%2e%2e%2fadmin%5c\\abc';
    const actions: Array<[EscapedSlashesAction, unknown]> = [
      ['KEEP_UNCHANGED', { kind: 'forward', path: '/%5Capp%2f%5c%2F..%2fadmin%5c/abc' }],
      ['REJECT_REQUEST', { kind: 'reject', reason: 'escaped slash in path' }],
      ['UNESCAPE_AND_REDIRECT', { kind: 'redirect', path: '/app/admin/abc' }],
      ['UNESCAPE_AND_FORWARD', { kind: 'forward', path: '/app/admin/abc' }],
    ];
    for (const [action, expected] of actions) {
      it(`${action} (with merge_slashes)`, () => expect(outcome(path, { escapedSlashes: action, mergeSlashes: true })).to.deep.equal(expected));
    }

    it('only acts when an escaped slash is there: other paths are forwarded, also under REJECT_REQUEST and UNESCAPE_AND_REDIRECT', () => {
      expect(outcome('/a/../b?x=%2F', { escapedSlashes: 'REJECT_REQUEST' })).to.deep.equal({ kind: 'forward', path: '/b?x=%2F' });
      expect(outcome('/a/../b', { escapedSlashes: 'UNESCAPE_AND_REDIRECT' })).to.deep.equal({ kind: 'forward', path: '/b' });
    });

    it('unescaped slashes then take part in dot segments: /public/..%2fadmin/x', () => {
      expect(forwarded('/public/..%2fadmin/x')).to.equal('/public/..%2fadmin/x');
      expect(forwarded('/public/..%2fadmin/x', { escapedSlashes: 'UNESCAPE_AND_FORWARD' })).to.equal('/admin/x');
      expect(forwarded('/%c0%2fadmin', { escapedSlashes: 'UNESCAPE_AND_FORWARD' })).to.equal('/%c0/admin');
    });
  });

  describe('the fragment', () => {
    it('is cut off first by default, before anything else looks at the path', () => {
      expect(forwarded('/app#foo')).to.equal('/app');
      expect(forwarded('/secret#/../public')).to.equal('/secret');
      expect(forwarded('/a#x?y=1')).to.equal('/a');
      expect(forwarded('/a?y=1#x')).to.equal('/a?y=1');
      expect(outcome('/a#%00')).to.deep.equal({ kind: 'forward', path: '/a' });
    });

    it('is kept when the proxy runs with the unsafe flag (HTTP_STRIP_FRAGMENT_FROM_PATH_UNSAFE_IF_DISABLED=false): normalize_path escapes its #', () => {
      expect(forwarded('/app#foo', { stripFragmentFromPath: false })).to.equal('/app%23foo');
      expect(forwarded('/app#foo', { stripFragmentFromPath: false, normalizePath: false })).to.equal('/app#foo');
      // The `..` glued to the escaped `#` is a name, not a parent segment.
      expect(forwarded('/xyz/remove/..;foo#frag=/.;foo', { stripFragmentFromPath: false })).to.equal('/xyz/remove/..%23frag=/.;foo');
    });
  });

  describe('reading the HttpConnectionManager config', () => {
    const flags = { stripFragmentFromPath: true };
    const of = (hcm: object) => pathNormalizationOf(decoded(HCM_TYPE, { stat_prefix: 's', ...hcm }), flags);

    it('defaults as Envoy: no normalization, no merging, escaped slashes kept (IMPLEMENTATION_SPECIFIC_DEFAULT)', () => {
      expect(of({})).to.deep.equal({ normalizePath: false, mergeSlashes: false, escapedSlashes: 'KEEP_UNCHANGED', stripFragmentFromPath: true });
      expect(of({ path_with_escaped_slashes_action: 'IMPLEMENTATION_SPECIFIC_DEFAULT' }).escapedSlashes).to.equal('KEEP_UNCHANGED');
    });

    it('reads normalize_path (BoolValue), merge_slashes and each escaped slashes action', () => {
      expect(of({ normalize_path: { value: true }, merge_slashes: true, path_with_escaped_slashes_action: 'UNESCAPE_AND_FORWARD' })).to.deep.equal({
        normalizePath: true,
        mergeSlashes: true,
        escapedSlashes: 'UNESCAPE_AND_FORWARD',
        stripFragmentFromPath: true,
      });
      expect(of({ normalize_path: { value: false } }).normalizePath).to.equal(false);
      for (const action of ['KEEP_UNCHANGED', 'REJECT_REQUEST', 'UNESCAPE_AND_REDIRECT', 'UNESCAPE_AND_FORWARD']) {
        expect(of({ path_with_escaped_slashes_action: action }).escapedSlashes).to.equal(action);
      }
      expect(pathNormalizationOf({}, { stripFragmentFromPath: false }).stripFragmentFromPath).to.equal(false);
    });

    it('refuses (NACK) what it cannot honour, naming the field', () => {
      expect(() => pathNormalizationOf({ path_with_escaped_slashes_action: 7 }, flags)).to.throw(/^http_connection_manager\.path_with_escaped_slashes_action: expected a string/);
      expect(() => pathNormalizationOf({ path_with_escaped_slashes_action: 'DECODE' }, flags)).to.throw('http_connection_manager.path_with_escaped_slashes_action: unknown action "DECODE"');
      expect(() => pathNormalizationOf({ normalize_path: true }, flags)).to.throw('http_connection_manager.normalize_path: expected a message');
      expect(() => of({ path_normalization_options: { forwarding_transformation: {} } })).to.throw('http_connection_manager.path_normalization_options: is not supported by the built-in proxy');
    });
  });
});
