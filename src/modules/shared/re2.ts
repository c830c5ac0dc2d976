/**
 * Regexes as Envoy runs them: RE2 syntax (what RE2 refuses is refused here, so no lookaround,
 * backreference or possessive quantifier slips through), matching in time linear in the
 * input (re2js, a port of RE2), and Envoy's bound on the size of the compiled program.
 * Config validation, the generators and the built-in proxy all go through this module.
 */
import type { RE2JS, RE2JSException } from 're2js';
import { onFirstUse } from './on-first-use';

// re2js is one large file; loaded when the first pattern is compiled, not at every program start.
// eslint-disable-next-line @typescript-eslint/no-require-imports
const re2js = onFirstUse(() => require('re2js') as typeof import('re2js'));

/**
 * The largest compiled program accepted: Envoy's runtime `re2.max_program_size.error_level`
 * as the incumbent sets it. re2js counts instructions the way RE2 does, closely enough that a
 * pattern near the bound is near it in both.
 */
export const MAX_PROGRAM_SIZE = 32_768;

/** A compiled regex matched against the whole value, as Envoy's `safe_regex` matchers do. */
export interface FullMatcher {
  test(value: string): boolean;
}

/** A pattern RE2 (or Envoy's program-size bound) refuses; the message says why. */
export class Re2SyntaxError extends Error {}

// What a JavaScript habit turns into, for the messages: the RE2 error alone rarely says it.
const HINTS: Array<[RegExp, string]> = [
  [/^\(\?<?[=!]/, 'RE2 has no lookahead or lookbehind'],
  [/^\\([1-9]|k)/, 'RE2 has no backreferences'],
  [/^(\*|\+|\?|\{[\d,]*\})\+$/, 'RE2 has no possessive quantifiers'],
  [/^\\C$/, 'a single byte (\\C) cannot be matched within the characters of a request'],
];

/** Compiles an RE2 pattern; throws Re2SyntaxError saying what RE2 refuses and why. */
export function compileRe2(pattern: string): RE2JS {
  let compiled: RE2JS;
  try {
    compiled = re2js().RE2JS.compile(pattern);
  } catch (err) {
    if (!(err instanceof re2js().RE2JSException)) throw err;
    throw new Re2SyntaxError(describe(err));
  }
  const size = compiled.programSize();
  if (size > MAX_PROGRAM_SIZE) {
    throw new Re2SyntaxError(`its compiled program has ${size} instructions, more than the ${MAX_PROGRAM_SIZE} allowed (Envoy's re2.max_program_size.error_level)`);
  }
  return compiled;
}

function describe(err: RE2JSException): string {
  const detail = err as Partial<{ error: string; input: string | null }>;
  if (typeof detail.error !== 'string') return err.message;
  const input = detail.input ?? '';
  const hint = HINTS.find(([shape]) => shape.test(input))?.[1];
  return `${detail.error}${input ? `: \`${input}\`` : ''}${hint ? ` (${hint})` : ''}`;
}

/** Why `pattern` is not a regex Envoy would accept, or undefined when it is. */
export function re2Problem(pattern: string): string | undefined {
  try {
    compileRe2(pattern);
    return undefined;
  } catch (err) {
    if (err instanceof Re2SyntaxError) return err.message;
    throw err;
  }
}

/** A full-match matcher for an RE2 pattern; throws Re2SyntaxError when RE2 refuses it. */
export function compileFullMatcher(pattern: string): FullMatcher {
  const compiled = compileRe2(pattern);
  return { test: (value) => compiled.testExact(value) };
}

/** `text` quoted so that RE2 reads it literally (RE2::QuoteMeta's escapes of the syntax characters). */
export function quoteRe2(text: string): string {
  return re2js().RE2JS.quote(text);
}

/**
 * Why `substitution` is not a rewrite RE2 accepts for a pattern of `groups` capturing groups
 * (RE2::CheckRewriteString): a backslash must be followed by a digit (a group) or another
 * backslash, and no group beyond the pattern's may be named. Undefined when it is fine.
 */
export function rewriteProblem(substitution: string, groups: number): string | undefined {
  for (let i = 0; i < substitution.length; i++) {
    if (substitution[i] !== '\\') continue;
    const next = substitution[++i];
    if (next === undefined) return 'a "\\" may not end it (write "\\\\" for a backslash)';
    if (next === '\\') continue;
    if (!/[0-9]/.test(next)) return `"\\${next}": a "\\" must be followed by a group number 0-9 or another "\\"`;
    if (Number(next) > groups) return `"\\${next}" names group ${next}, but the pattern has ${groups} capturing group${groups === 1 ? '' : 's'}`;
  }
  return undefined;
}

/**
 * RE2::GlobalReplace, as Envoy's `regex_rewrite` runs it: every non-overlapping match of
 * `pattern` in a text is replaced by `substitution`, where `\0`-`\9` insert a group (empty when
 * it did not take part) and `\\` a backslash. An empty match right after the previous match is
 * skipped. Throws Re2SyntaxError when RE2 refuses the pattern; the substitution is taken as
 * Envoy takes it (an invalid escape ends that replacement, as RE2::Rewrite stops there).
 */
export function compileGlobalReplace(pattern: string, substitution: string): (text: string) => string {
  const compiled = compileRe2(pattern);
  return (text) => {
    const matcher = compiled.matcher(text);
    let out = '';
    let at = 0;
    let lastEnd = -1;
    let replaced = 0;
    while (at <= text.length && matcher.find(at)) {
      const start = matcher.start();
      const end = matcher.end();
      out += text.slice(at, start);
      if (start === end && start === lastEnd) {
        const step = (text.codePointAt(at) ?? 0) > 0xffff ? 2 : 1;
        out += text.slice(at, at + step);
        at += step;
        continue;
      }
      out += expand(substitution, (n) => (n <= matcher.groupCount() ? matcher.group(n) ?? '' : ''));
      at = end;
      lastEnd = end;
      replaced++;
    }
    return replaced === 0 ? text : out + text.slice(at);
  };
}

/** RE2::Rewrite: the substitution with its groups filled in, up to an invalid escape. */
function expand(substitution: string, group: (n: number) => string): string {
  let out = '';
  for (let i = 0; i < substitution.length; i++) {
    const c = substitution[i];
    if (c !== '\\') {
      out += c;
      continue;
    }
    const next = substitution[++i];
    if (next !== undefined && next >= '0' && next <= '9') out += group(Number(next));
    else if (next === '\\') out += '\\';
    else break;
  }
  return out;
}
