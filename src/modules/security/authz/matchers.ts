/**
 * Envoy matchers for policy values. Policy values use `*` as a whole value (anything present),
 * a leading `*` (suffix) or a trailing `*` (prefix); everything else is literal.
 */
import { isIP } from 'node:net';
import { quoteRe2 } from '../../shared/re2';
import { CidrRange, HeaderMatcher, MetadataMatcher, StringMatcher, TypedExtensionConfig, ValueMatcher } from './rbac-types';
import { URI_TEMPLATE_TYPE } from '../../envoy/well-known';
export { URI_TEMPLATE_TYPE } from '../../envoy/well-known';


export const regexMatcher = (regex: string): StringMatcher => ({ safe_regex: { regex } });
export const exactMatcher = (exact: string, ignoreCase = false): StringMatcher => (ignoreCase ? { exact, ignore_case: true } : { exact });
export const prefixMatcher = (prefix: string, ignoreCase = false): StringMatcher => (ignoreCase ? { prefix, ignore_case: true } : { prefix });
export const suffixMatcher = (suffix: string, ignoreCase = false): StringMatcher => (ignoreCase ? { suffix, ignore_case: true } : { suffix });

/** A required (non-empty) value: what `*` means, since Envoy refuses empty prefixes and suffixes. */
export const ANY_VALUE: StringMatcher = regexMatcher('.+');

/** `*` → any non-empty value, `*x` → suffix, `x*` → prefix, else exact. */
export function stringMatcher(value: string): StringMatcher {
  return stringMatcherWithPrefix(value, '');
}

/**
 * Like `stringMatcher`, matching `prefix + value` (e.g. `spiffe://` before a principal).
 * `*` alone ignores the prefix; a suffix form becomes a regex, since the prefix must still lead.
 */
export function stringMatcherWithPrefix(value: string, prefix: string): StringMatcher {
  if (value === '*') return regexMatcher('.+');
  if (value.startsWith('*')) {
    if (prefix === '') return suffixMatcher(value.slice(1));
    return regexMatcher(`${quoteRe2(prefix)}.*${quoteRe2(value.slice(1))}`);
  }
  if (value.endsWith('*')) return prefixMatcher(prefix + value.slice(0, -1));
  return exactMatcher(prefix + value);
}

/** A header by value: `*` means present, `*x`/`x*` suffix/prefix, else exact. */
export function headerMatcher(name: string, value: string, ignoreCase = false): HeaderMatcher {
  if (value === '*') return { name, present_match: true };
  if (value.startsWith('*')) return { name, string_match: suffixMatcher(value.slice(1), ignoreCase) };
  if (value.endsWith('*')) return { name, string_match: prefixMatcher(value.slice(0, -1), ignoreCase) };
  return { name, string_match: exactMatcher(value, ignoreCase) };
}

/** Host names compare case-insensitively. */
export function hostMatcher(value: string): HeaderMatcher {
  return headerMatcher(':authority', value, true);
}

/** `{*}` (one segment) or `{**}` (any number of segments) make a path a template. */
export function isPathTemplate(path: string): boolean {
  return path.includes('{*}') || path.includes('{**}');
}

/** A templated path as Envoy's uri_template matcher, whose syntax is `*` and `**`. */
export function pathTemplateMatcher(path: string): TypedExtensionConfig {
  const template = path.replace(/\{\*\*\}/g, '**').replace(/\{\*\}/g, '*');
  return { name: 'uri-template', typed_config: { '@type': URI_TEMPLATE_TYPE, path_template: template } };
}

/** `1.2.3.4` (a host: /32 or /128) or `10.0.0.0/8`. */
export function cidrRange(value: string): CidrRange {
  const [address, length, extra] = value.trim().split('/');
  const family = isIP(address);
  if (family === 0 || extra !== undefined) throw new Error(`"${value}" is not an IP address or CIDR range`);
  const max = family === 4 ? 32 : 128;
  if (length === undefined) return { address_prefix: address, prefix_len: { value: max } };
  const bits = /^\d{1,3}$/.test(length) ? Number(length) : NaN;
  if (!(bits >= 0 && bits <= max)) throw new Error(`"${value}": prefix length must be 0 to ${max}`);
  return { address_prefix: address, prefix_len: { value: bits } };
}

/** A port number from 0 to 65535. */
export function portNumber(value: string): number {
  const n = /^\d{1,5}$/.test(value) ? Number(value) : NaN;
  if (!(n >= 0 && n <= 65535)) throw new Error(`"${value}" is not a port number`);
  return n;
}

/** One matcher that holds when any of `matchers` does (itself when alone). */
export function orValueMatcher(matchers: ValueMatcher[]): ValueMatcher {
  return matchers.length === 1 ? matchers[0] : { or_match: { value_matchers: matchers } };
}

/** The values as string matchers, ORed. */
export function stringOrValueMatcher(values: readonly string[]): ValueMatcher {
  return orValueMatcher(values.map((v) => ({ string_match: stringMatcher(v) })));
}

export function metadataMatcher(filter: string, keys: readonly string[], value: ValueMatcher): MetadataMatcher {
  return { filter, path: keys.map((key) => ({ key })), value };
}

/**
 * A metadata value that may be a string or a list of strings: holds when the string matches,
 * or when the list has an element that does (JWT claims such as `aud`, `groups`, `scope`).
 */
export function stringOrListMetadataMatcher(filter: string, keys: readonly string[], value: ValueMatcher): MetadataMatcher {
  return metadataMatcher(filter, keys, { or_match: { value_matchers: [{ list_match: { one_of: value } }, value] } });
}
