import { compileFullMatcher, compileGlobalReplace, FullMatcher, Re2SyntaxError } from '../../../shared/re2';
import { asObject, asString, fail, requiredString } from '../shared/config';

/**
 * Envoy's regexes are RE2 matched against the whole value; the built-in proxy runs them with
 * RE2's own syntax and linear-time matching (shared/re2), so no pattern can stall a request.
 */

/** A full-match RE2 matcher; throws naming `field` when RE2 refuses the pattern. */
export function fullMatchRegex(pattern: string, field: string): FullMatcher {
  return compiled(field, pattern, () => compileFullMatcher(pattern));
}

/** envoy.type.matcher.v3.RegexMatcher → full-match matcher. */
export function compileRegexMatcher(value: unknown, field: string): FullMatcher {
  const matcher = asObject(value, field);
  return fullMatchRegex(requiredString(matcher.regex, `${field}.regex`), `${field}.regex`);
}

/**
 * envoy.type.matcher.v3.RegexMatchAndSubstitute (a route's `regex_rewrite`) → the rewrite of a
 * text, with RE2::GlobalReplace's semantics as Envoy uses them.
 */
export function compileRegexSubstitution(value: unknown, field: string): (text: string) => string {
  const rewrite = asObject(value, field);
  const pattern = requiredString(asObject(rewrite.pattern, `${field}.pattern`).regex, `${field}.pattern.regex`);
  const substitution = asString(rewrite.substitution, `${field}.substitution`);
  return compiled(`${field}.pattern.regex`, pattern, () => compileGlobalReplace(pattern, substitution));
}

function compiled<T>(field: string, pattern: string, compile: () => T): T {
  try {
    return compile();
  } catch (err) {
    if (err instanceof Re2SyntaxError) fail(field, `regex ${JSON.stringify(pattern)} does not compile as RE2: ${err.message}`);
    throw err;
  }
}
