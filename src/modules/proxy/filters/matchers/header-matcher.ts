import { asBool, asNumber, asObject, asString, fail, has, requiredString } from '../shared/config';
import { compileRegexMatcher } from './regex';
import { compileStringMatcher, StringPredicate } from './string-matcher';

/** Request headers as filters see them (lower-case names, repeated values joined with `,`); none on a TCP connection. */
export type Headers = Readonly<Record<string, string>> | undefined;
export type HeaderPredicate = (headers: Headers) => boolean;

const SPECIFIERS = [
  'exact_match', 'safe_regex_match', 'range_match', 'present_match',
  'prefix_match', 'suffix_match', 'contains_match', 'string_match',
] as const;

/**
 * envoy.config.route.v3.HeaderMatcher with Envoy's semantics: an absent header matches only
 * `present_match: false` (or, inverted, `present_match: true`) unless
 * `treat_missing_header_as_empty`; no specifier at all means "present".
 */
export function compileHeaderMatcher(value: unknown, field: string): HeaderPredicate {
  const matcher = asObject(value, field);
  const name = requiredString(matcher.name, `${field}.name`).toLowerCase();
  const invert = asBool(matcher.invert_match, `${field}.invert_match`);
  const missingAsEmpty = asBool(matcher.treat_missing_header_as_empty, `${field}.treat_missing_header_as_empty`);
  const set = SPECIFIERS.filter((key) => has(matcher, key));
  if (set.length > 1) fail(field, `only one of ${set.join(', ')} may be set`);
  const kind = set[0];

  // `present_match` decides on presence alone; every other kind looks at the value.
  const presentWanted = kind === 'present_match' ? asBool(matcher.present_match, `${field}.present_match`) : kind === undefined;
  const valueTest: StringPredicate | undefined = kind === undefined || kind === 'present_match' ? undefined : valuePredicate(matcher, kind, field);

  return (headers) => {
    const raw = headers?.[name];
    if (raw === undefined && !missingAsEmpty) {
      const isPresenceTest = valueTest === undefined;
      return invert ? isPresenceTest && presentWanted : isPresenceTest && !presentWanted;
    }
    const matched = valueTest ? valueTest(raw ?? '') : presentWanted;
    return matched !== invert;
  };
}

function valuePredicate(matcher: Record<string, unknown>, kind: (typeof SPECIFIERS)[number], field: string): StringPredicate {
  const at = `${field}.${kind}`;
  switch (kind) {
    case 'exact_match': {
      // Envoy's legacy exact match: an empty value matches any value.
      const wanted = asString(matcher.exact_match, at);
      return (v) => wanted === '' || v === wanted;
    }
    case 'safe_regex_match': {
      const regex = compileRegexMatcher(matcher.safe_regex_match, at);
      return (v) => regex.test(v);
    }
    case 'range_match': {
      const range = asObject(matcher.range_match, at);
      const start = asNumber(range.start, `${at}.start`);
      const end = asNumber(range.end, `${at}.end`);
      // Half-open [start, end) over a whole decimal integer, as Envoy's SimpleAtoi.
      return (v) => /^[+-]?\d+$/.test(v.trim()) && Number(v) >= start && Number(v) < end;
    }
    case 'prefix_match': {
      const wanted = requiredString(matcher.prefix_match, at);
      return (v) => v.startsWith(wanted);
    }
    case 'suffix_match': {
      const wanted = requiredString(matcher.suffix_match, at);
      return (v) => v.endsWith(wanted);
    }
    case 'contains_match': {
      const wanted = requiredString(matcher.contains_match, at);
      return (v) => v.includes(wanted);
    }
    default:
      return compileStringMatcher(matcher.string_match, at);
  }
}
