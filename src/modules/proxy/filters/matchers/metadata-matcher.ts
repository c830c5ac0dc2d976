import { asBool, asList, asNumber, asObject, fail, isObject, oneofMember, requiredString } from '../shared/config';
import { compileStringMatcher } from './string-matcher';

/** Dynamic metadata per filter name, plain JSON values (`undefined` = not set, Envoy's KIND_NOT_SET). */
export type DynamicMetadata = Readonly<Record<string, Readonly<Record<string, unknown>>>>;
export type ValuePredicate = (value: unknown) => boolean;
export type MetadataPredicate = (metadata: DynamicMetadata) => boolean;

const VALUE_KINDS = ['null_match', 'double_match', 'string_match', 'bool_match', 'present_match', 'list_match', 'or_match'] as const;

/** envoy.type.matcher.v3.MetadataMatcher: the value at `filter` / `path...`, then `value`, then `invert`. */
export function compileMetadataMatcher(value: unknown, field: string): MetadataPredicate {
  const matcher = asObject(value, field);
  const filter = requiredString(matcher.filter, `${field}.filter`);
  const path = asList(matcher.path, `${field}.path`).map((segment, i) => {
    const at = `${field}.path[${i}]`;
    oneofMember(asObject(segment, at), ['key'], at);
    return requiredString((segment as Record<string, unknown>).key, `${at}.key`);
  });
  if (path.length === 0) fail(`${field}.path`, 'needs at least one key');
  const test = compileValueMatcher(matcher.value, `${field}.value`);
  const invert = asBool(matcher.invert, `${field}.invert`);
  return (metadata) => test(valueAt(metadata[filter], path)) !== invert;
}

/** Walks struct keys; anything missing or not a struct on the way yields `undefined`. */
export function valueAt(root: unknown, path: readonly string[]): unknown {
  let current: unknown = root;
  for (const key of path) {
    if (!isObject(current)) return undefined;
    current = current[key];
  }
  return current;
}

/** envoy.type.matcher.v3.ValueMatcher over a plain JSON value. */
export function compileValueMatcher(value: unknown, field: string): ValuePredicate {
  const matcher = asObject(value, field);
  const kind = oneofMember(matcher, VALUE_KINDS, field);
  const at = `${field}.${kind}`;
  switch (kind) {
    case 'null_match':
      return (v) => v === null;
    case 'double_match':
      return compileDoubleMatcher(matcher.double_match, at);
    case 'string_match': {
      const test = compileStringMatcher(matcher.string_match, at);
      return (v) => typeof v === 'string' && test(v);
    }
    case 'bool_match': {
      const wanted = asBool(matcher.bool_match, at);
      return (v) => typeof v === 'boolean' && v === wanted;
    }
    case 'present_match': {
      // Envoy: true matches any set value (null included); false never matches.
      const wanted = asBool(matcher.present_match, at);
      return (v) => wanted && v !== undefined;
    }
    case 'list_match': {
      const list = asObject(matcher.list_match, at);
      oneofMember(list, ['one_of'], at);
      const element = compileValueMatcher(list.one_of, `${at}.one_of`);
      return (v) => Array.isArray(v) && v.some(element);
    }
    default: {
      const alternatives = asList(asObject(matcher.or_match, at).value_matchers, `${at}.value_matchers`).map((m, i) =>
        compileValueMatcher(m, `${at}.value_matchers[${i}]`),
      );
      if (alternatives.length === 0) fail(`${at}.value_matchers`, 'needs at least one matcher');
      return (v) => alternatives.some((test) => test(v));
    }
  }
}

function compileDoubleMatcher(value: unknown, field: string): ValuePredicate {
  const matcher = asObject(value, field);
  const kind = oneofMember(matcher, ['range', 'exact'], field);
  if (kind === 'exact') {
    const wanted = asNumber(matcher.exact, `${field}.exact`);
    return (v) => typeof v === 'number' && v === wanted;
  }
  const range = asObject(matcher.range, `${field}.range`);
  const start = asNumber(range.start, `${field}.range.start`);
  const end = asNumber(range.end, `${field}.range.end`);
  return (v) => typeof v === 'number' && v >= start && v < end;
}
