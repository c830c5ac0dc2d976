import { asBool, asObject, asString, oneofMember, requiredString } from '../shared/config';
import { compileRegexMatcher } from './regex';

export type StringPredicate = (value: string) => boolean;

const MEMBERS = ['exact', 'prefix', 'suffix', 'safe_regex', 'contains'] as const;

/** envoy.type.matcher.v3.StringMatcher → predicate, with Envoy's `ignore_case` (not applied to regexes). */
export function compileStringMatcher(value: unknown, field: string): StringPredicate {
  const matcher = asObject(value, field);
  const kind = oneofMember(matcher, MEMBERS, field, ['custom']);
  const ignoreCase = asBool(matcher.ignore_case, `${field}.ignore_case`);
  const fold = (s: string): string => (ignoreCase ? s.toLowerCase() : s);
  if (kind === 'safe_regex') {
    const regex = compileRegexMatcher(matcher.safe_regex, `${field}.safe_regex`);
    return (s) => regex.test(s);
  }
  // `exact` may be empty (matches only the empty string); the others need text.
  const wanted = fold(kind === 'exact' ? asString(matcher.exact, `${field}.exact`) : requiredString(matcher[kind], `${field}.${kind}`));
  switch (kind) {
    case 'exact':
      return (s) => fold(s) === wanted;
    case 'prefix':
      return (s) => fold(s).startsWith(wanted);
    case 'suffix':
      return (s) => fold(s).endsWith(wanted);
    default:
      return (s) => fold(s).includes(wanted);
  }
}
