import { expect } from 'chai';
import {
  compileFullMatcher, compileGlobalReplace, MAX_PROGRAM_SIZE, quoteRe2, re2Problem, Re2SyntaxError, rewriteProblem,
} from '../../../src/modules/shared/re2';

const fullMatch = (pattern: string, value: string): boolean => compileFullMatcher(pattern).test(value);

describe('RE2 regexes (shared/re2)', () => {
  describe('match with RE2 semantics where JavaScript differs', () => {
    it('matches the whole value, leftmost-first alternatives included', () => {
      expect(fullMatch('ab|cd', 'abcd')).to.equal(false);
      expect(fullMatch('ab|cd', 'cd')).to.equal(true);
      expect(fullMatch('a|ab', 'ab')).to.equal(true);
    });

    it('reads \\A and \\z as the ends of the text, and $ as the end of the text too', () => {
      expect(fullMatch('\\Afoo\\z', 'foo')).to.equal(true);
      expect(fullMatch('foo\\z', 'fooz')).to.equal(false); // JavaScript reads \z as "z"
      expect(fullMatch('a$', 'a\n')).to.equal(false);
      expect(fullMatch('(?m)a$\\n', 'a\n')).to.equal(true);
    });

    it('takes POSIX classes, Unicode classes and \\Q...\\E', () => {
      expect(fullMatch('[[:alpha:]]+-[[:digit:]]+', 'ab-42')).to.equal(true);
      expect(fullMatch('[[:^digit:]]+', 'ab')).to.equal(true);
      expect(fullMatch('[[:^digit:]]+', 'a1')).to.equal(false);
      expect(fullMatch('\\pL+', 'héllo')).to.equal(true);
      expect(fullMatch('\\p{Greek}+', 'αβγ')).to.equal(true);
      expect(fullMatch('\\Q.*\\E', '.*')).to.equal(true);
      expect(fullMatch('\\Q.*\\E', 'ab')).to.equal(false);
    });

    it('takes inline flags and (?P<name>...) groups', () => {
      expect(fullMatch('(?i)spiffe://.*', 'SPIFFE://x')).to.equal(true);
      expect(fullMatch('a(?i)b', 'aB')).to.equal(true);
      expect(fullMatch('a(?i)b', 'AB')).to.equal(false);
      expect(fullMatch('(?s)a.b', 'a\nb')).to.equal(true);
      expect(fullMatch('a.b', 'a\nb')).to.equal(false);
      expect(fullMatch('(?P<n>[0-9]+)-(?<m>[a-z]+)', '42-ab')).to.equal(true);
    });

    it('matches a character outside the BMP as one character', () => {
      expect(fullMatch('.', '😀')).to.equal(true);
      expect(/^.$/.test('😀')).to.equal(false); // what JavaScript's RegExp says without the u flag
    });

    it('matches in linear time where a backtracking engine takes exponential time', () => {
      for (const pattern of ['/(a+)+$', '(a|aa)+', '(x+x+)+y', '(.*a){20}']) {
        const matcher = compileFullMatcher(pattern);
        const input = `/${'a'.repeat(5000)}b`;
        const started = process.hrtime.bigint();
        expect(matcher.test(input), pattern).to.equal(false);
        const ms = Number(process.hrtime.bigint() - started) / 1e6;
        expect(ms, `${pattern} took ${ms} ms`).to.be.below(500);
      }
    });
  });

  describe('refuse what RE2 refuses, saying why', () => {
    const refused: Array<[string, RegExp]> = [
      ['(?<=x)a', /invalid named capture: `\(\?<=x\)a` \(RE2 has no lookahead or lookbehind\)/],
      ['(?<!x)a', /RE2 has no lookahead or lookbehind/],
      ['(?=x)a', /invalid or unsupported Perl syntax: `\(\?=` \(RE2 has no lookahead or lookbehind\)/],
      ['a(?!x)', /RE2 has no lookahead or lookbehind/],
      ['(a)\\1', /invalid escape sequence: `\\1` \(RE2 has no backreferences\)/],
      ['(?<n>a)\\k<n>', /invalid escape sequence: `\\k` \(RE2 has no backreferences\)/],
      ['a++', /invalid nested repetition operator: `\+\+` \(RE2 has no possessive quantifiers\)/],
      ['a*+', /RE2 has no possessive quantifiers/],
      ['a{2}+', /RE2 has no possessive quantifiers/],
      ['a**', /invalid nested repetition operator: `\*\*`$/],
      ['\\C', /invalid escape sequence: `\\C` \(a single byte/],
      ['\\Z', /invalid escape sequence: `\\Z`$/],
      ['(?x)a b', /invalid or unsupported Perl syntax: `\(\?x`/],
      ['a{1001}', /invalid repeat count: `\{1001\}`/],
      ['((a{100}){100}){100}', /invalid repeat count/],
      ['(a', /missing closing \): `\(a`/],
      ['[z-a]', /invalid character class range: `z-a`/],
      ['\\8', /invalid escape sequence: `\\8`/],
    ];
    for (const [pattern, message] of refused) {
      it(pattern, () => {
        expect(re2Problem(pattern)).to.match(message);
        expect(() => compileFullMatcher(pattern)).to.throw(Re2SyntaxError, message);
      });
    }

    it(`a pattern whose program exceeds ${MAX_PROGRAM_SIZE} instructions (Envoy's re2.max_program_size.error_level)`, () => {
      expect(re2Problem('(abcdefghijklmnopqrstuvwxyz0123456789){1000}')).to.match(/program has 38002 instructions, more than the 32768 allowed/);
      expect(re2Problem('(abcdefghijklmnopqrstuvwxyz){1000}')).to.equal(undefined);
    });

    it('takes what JavaScript refuses but RE2 reads', () => {
      for (const pattern of ['(?i)abc', '(?P<n>a)', '[[:alpha:]]', '\\pN', '(?U)a+', '\\Qa(b\\E', 'a{,2}']) {
        expect(re2Problem(pattern), pattern).to.equal(undefined);
      }
    });
  });

  it('quotes text so that RE2 reads it literally', () => {
    let printable = '';
    for (let c = 0x20; c < 0x7f; c++) printable += String.fromCharCode(c);
    for (const text of [printable, 'a.b*c', 'spiffe://td/ns/x(y)/sa/[z]', 'é😀\\E']) {
      expect(fullMatch(quoteRe2(text), text), text).to.equal(true);
    }
    expect(fullMatch(quoteRe2('a.c'), 'abc')).to.equal(false);
  });

  describe('global replace (RE2::GlobalReplace, as Envoy regex_rewrite runs it)', () => {
    const replace = (pattern: string, substitution: string, text: string): string => compileGlobalReplace(pattern, substitution)(text);

    it('replaces every match, with \\N groups, \\0 the whole match and \\\\ a backslash', () => {
      expect(replace('^/service/([^/]+)(/.*)$', '\\2/instance/\\1', '/service/foo/v1/api')).to.equal('/v1/api/instance/foo');
      expect(replace('o', '0', '/foo/boo')).to.equal('/f00/b00');
      expect(replace('[0-9]+', '<\\0>', 'a1b22')).to.equal('a<1>b<22>');
      expect(replace('b', '\\\\', 'abc')).to.equal('a\\c');
    });

    it('leaves text without a match as it is, and inserts nothing for a group that took no part', () => {
      expect(replace('x', 'y', '/abc')).to.equal('/abc');
      expect(replace('(a)|(b)', '[\\1\\2]', 'ab')).to.equal('[a][b]');
      expect(replace('a', '[\\5]', 'a')).to.equal('[]');
    });

    it('skips an empty match right after a match, as RE2 does (JavaScript does not)', () => {
      expect(replace('a*', '-', 'baaac')).to.equal('-b-c-');
      expect('baaac'.replace(/a*/g, '-')).to.equal('-b--c-');
      expect(replace('', '-', '😀x')).to.equal('-😀-x-');
    });

    it('ends a replacement at an invalid escape, as RE2::Rewrite stops there', () => {
      expect(replace('b', 'x\\qy', 'abc')).to.equal('axc');
      expect(replace('b', 'x\\', 'abc')).to.equal('axc');
    });

    it('refuses a pattern RE2 refuses', () => {
      expect(() => compileGlobalReplace('(?<=a)b', 'x')).to.throw(Re2SyntaxError, /lookbehind/);
    });
  });

  it('checks a rewrite as RE2::CheckRewriteString does', () => {
    expect(rewriteProblem('/\\1/\\0/\\\\', 1)).to.equal(undefined);
    expect(rewriteProblem('/\\2', 1)).to.match(/"\\2" names group 2, but the pattern has 1 capturing group$/);
    expect(rewriteProblem('/\\x', 3)).to.match(/"\\x": a "\\" must be followed by a group number 0-9 or another "\\"/);
    expect(rewriteProblem('/a\\', 0)).to.match(/may not end it/);
  });
});
