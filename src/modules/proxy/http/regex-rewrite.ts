/**
 * A route's `regex_rewrite`, compiled once per route action: when its route table arrives (so a
 * pattern RE2 refuses NACKs the table) and then looked up for each request it rewrites.
 */
import { compileRegexSubstitution } from '../filters/matchers/regex';
import type { Decoded } from '../xds/xds-client';

const compiledByAction = new WeakMap<Decoded, (path: string) => string>();

/** The path rewrite of a route action that has `regex_rewrite`; throws naming `field` when it cannot run. */
export function regexRewriteOf(action: Decoded, field: string): (path: string) => string {
  let rewrite = compiledByAction.get(action);
  if (!rewrite) {
    rewrite = compileRegexSubstitution(action.regex_rewrite, field);
    compiledByAction.set(action, rewrite);
  }
  return rewrite;
}
