import * as crypto from 'node:crypto';
import { FuncError, GoFunc } from './exec';
import { formatValue, quoteGo } from './format';
import { compareStrings, dynamicFromJSON, GoEnum, GoInt, GoMap, GoNil, GoStringer, GoStruct, MAP_ANY, T, toPlain, typeName } from './values';

/**
 * The sprig functions (the template library the incumbent's injector loads) that injection
 * templates use, with sprig's semantics: `default` and `empty` treat zero values as empty,
 * numbers convert the way sprig's casts do, lists are []interface{}.
 */

/** sprig's strval: strings as they are, Stringers by their String, the rest by %v. */
export function strval(v: unknown): string {
  if (typeof v === 'string') return v;
  if (v === undefined || v === null) return '<nil>';
  return formatValue(v);
}

/** sprig's empty: nil, false, 0, "", empty collections; structs are never empty. */
export function empty(v: unknown): boolean {
  if (v === undefined || v === null) return true;
  if (typeof v === 'string') return v.length === 0;
  if (typeof v === 'boolean') return !v;
  if (typeof v === 'number') return v === 0;
  if (v instanceof GoInt || v instanceof GoEnum) return v.value === 0;
  if (Array.isArray(v)) return v.length === 0;
  if (v instanceof GoMap) return v.entries.size === 0;
  if (v instanceof GoNil) return true;
  return false;
}

/** sprig's toInt64 (via cast): numbers, numeric strings, bools; anything else 0. */
export function toInt64(v: unknown): number {
  if (v instanceof GoInt || v instanceof GoEnum) return v.value;
  if (typeof v === 'number') return Math.trunc(v);
  if (typeof v === 'boolean') return v ? 1 : 0;
  if (typeof v === 'string') {
    const s = v.trim();
    if (/^[+-]?\d+$/.test(s)) return Number(s);
    if (/^[+-]?0[xX][0-9a-fA-F]+$/.test(s)) return Number.parseInt(s, 16);
    return 0;
  }
  return 0;
}

function toFloat64(v: unknown): number {
  if (v instanceof GoInt || v instanceof GoEnum) return v.value;
  if (typeof v === 'number') return v;
  if (typeof v === 'boolean') return v ? 1 : 0;
  if (typeof v === 'string') {
    const n = Number(v.trim());
    return Number.isFinite(n) && v.trim() !== '' ? n : 0;
  }
  return 0;
}

/** sprig's strslice: a list as strings (nils dropped), a single value as a one-item list. */
function strslice(v: unknown): string[] {
  if (v === undefined || v === null) return [];
  if (Array.isArray(v)) return v.filter((e) => e !== null && e !== undefined).map(strval);
  if (v instanceof GoNil) return [];
  return [strval(v)];
}

function list(v: unknown, fn: string): unknown[] {
  if (Array.isArray(v)) return v;
  if (v instanceof GoNil && v.type.kind === 'slice') return [];
  throw new FuncError(`Cannot ${fn} on type ${typeName(v)}`);
}

function dict(...pairs: unknown[]): GoMap {
  const entries = new Map<string, unknown>();
  for (let i = 0; i < pairs.length; i += 2) entries.set(strval(pairs[i]), i + 1 < pairs.length ? pairs[i + 1] : '');
  return new GoMap(entries, MAP_ANY);
}

function asMap(v: unknown, fn: string): GoMap {
  if (v instanceof GoMap) return v;
  if (v === null || v === undefined) return new GoMap(new Map(), MAP_ANY, true);
  throw new FuncError(`${fn}: expected a map, got ${typeName(v)}`);
}

function indent(spaces: number, s: string): string {
  const pad = ' '.repeat(Math.max(0, spaces));
  return pad + s.replace(/\n/g, '\n' + pad);
}

function trunc(c: number, s: string): string {
  const bytes = Buffer.from(s);
  if (c < 0 && bytes.length + c > 0) return bytes.subarray(bytes.length + c).toString();
  if (c >= 0 && bytes.length > c) return bytes.subarray(0, c).toString();
  return s;
}

/** strings.Trim(s, cutset). */
function trimCutset(s: string, cutset: string): string {
  const chars = new Set([...cutset]);
  const arr = [...s];
  let start = 0;
  let end = arr.length;
  while (start < end && chars.has(arr[start])) start++;
  while (end > start && chars.has(arr[end - 1])) end--;
  return arr.slice(start, end).join('');
}

function goRegex(pattern: string): RegExp {
  try {
    return new RegExp(pattern, 'u');
  } catch (err) {
    throw new FuncError(`error parsing regexp: ${(err as Error).message}`);
  }
}

function deepCopy(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(deepCopy);
  if (v instanceof GoMap) return new GoMap(new Map([...v.entries].map(([k, e]) => [k, deepCopy(e)])), v.type, v.nil);
  return v;
}

const f = (fn: GoFunc['fn'], params: GoFunc['params'], variadic?: GoFunc['variadic']): GoFunc => ({ fn, params, variadic });
const int64 = (n: number) => new GoInt(n, T.int64);

export const SPRIG: ReadonlyMap<string, GoFunc> = new Map<string, GoFunc>([
  // Defaults and emptiness.
  ['default', f((d, ...given) => (given.length === 0 || empty(given[0]) ? d : given[0]), ['any'], 'any')],
  ['empty', f((v) => empty(v), ['any'])],
  ['coalesce', f((...vs) => vs.find((x) => !empty(x)) ?? null, [], 'any')],
  ['ternary', f((a, b, c) => (c ? a : b), ['any', 'any', 'bool'])],
  ['required', f((warn, v) => {
    if (v === null || (typeof v === 'string' && v === '')) throw new FuncError(warn as string);
    return v;
  }, ['string', 'any'])],
  ['fail', f((msg) => {
    throw new FuncError(msg as string);
  }, ['string'])],
  // Strings.
  ['quote', f((...s) => s.filter((x) => x !== null).map((x) => quoteGo(strval(x))).join(' '), [], 'any')],
  ['squote', f((...s) => s.filter((x) => x !== null).map((x) => `'${strval(x)}'`).join(' '), [], 'any')],
  ['indent', f((n, s) => indent(n as number, s as string), ['int', 'string'])],
  ['nindent', f((n, s) => '\n' + indent(n as number, s as string), ['int', 'string'])],
  ['trunc', f((c, s) => trunc(c as number, s as string), ['int', 'string'])],
  ['trim', f((s) => (s as string).trim(), ['string'])],
  ['trimAll', f((a, s) => trimCutset(s as string, a as string), ['string', 'string'])],
  ['trimPrefix', f((a, s) => ((s as string).startsWith(a as string) ? (s as string).slice((a as string).length) : s), ['string', 'string'])],
  ['trimSuffix', f((a, s) => ((s as string).endsWith(a as string) && (a as string) !== '' ? (s as string).slice(0, -(a as string).length) : s), ['string', 'string'])],
  ['upper', f((s) => (s as string).toUpperCase(), ['string'])],
  ['lower', f((s) => (s as string).toLowerCase(), ['string'])],
  ['title', f((s) => (s as string).replace(/(^|\s)(\S)/g, (_m, a, b) => a + b.toUpperCase()), ['string'])],
  ['repeat', f((n, s) => (s as string).repeat(Math.max(0, n as number)), ['int', 'string'])],
  ['replace', f((o, n, s) => (s as string).split(o as string).join(n as string), ['string', 'string', 'string'])],
  ['nospace', f((s) => (s as string).replace(/\s/g, ''), ['string'])],
  ['hasPrefix', f((p, s) => (s as string).startsWith(p as string), ['string', 'string'])],
  ['hasSuffix', f((p, s) => (s as string).endsWith(p as string), ['string', 'string'])],
  ['substr', f((start, end, s) => {
    const b = Buffer.from(s as string);
    const st = start as number;
    const en = end as number;
    if (st < 0) return b.subarray(0, en).toString();
    if (en < 0 || en > b.length) return b.subarray(st).toString();
    return b.subarray(st, en).toString();
  }, ['int', 'int', 'string'])],
  ['cat', f((...vs) => vs.filter((x) => x !== null).map(strval).join(' '), [], 'any')],
  ['splitList', f((sep, s) => (s as string).split(sep as string), ['string', 'string'])],
  ['split', f((sep, s) => {
    const out = new Map<string, unknown>();
    (s as string).split(sep as string).forEach((part, i) => out.set(`_${i}`, part));
    return new GoMap(out, T.map(T.string));
  }, ['string', 'string'])],
  ['join', f((sep, v) => strslice(v).join(sep as string), ['string', 'any'])],
  ['toString', f((v) => strval(v), ['any'])],
  ['toStrings', f((v) => strslice(v), ['any'])],
  ['b64enc', f((s) => Buffer.from(s as string).toString('base64'), ['string'])],
  ['b64dec', f((s) => Buffer.from(s as string, 'base64').toString(), ['string'])],
  ['sha256sum', f((s) => crypto.createHash('sha256').update(s as string).digest('hex'), ['string'])],
  ['regexMatch', f((re, s) => goRegex(re as string).test(s as string), ['string', 'string'])],
  ['regexReplaceAll', f((re, s, repl) => (s as string).replace(new RegExp(goRegex(re as string).source, 'gu'), (repl as string).replace(/\$\{?(\w+)\}?/g, '$$$1')), ['string', 'string', 'string'])],
  // Numbers.
  ['int', f((v) => new GoInt(toInt64(v), T.int), ['any'])],
  ['int64', f((v) => int64(toInt64(v)), ['any'])],
  ['float64', f((v) => toFloat64(v), ['any'])],
  ['atoi', f((s) => new GoInt(/^[+-]?\d+$/.test((s as string).trim()) ? Number(s) : 0), ['string'])],
  ['add', f((...vs) => int64(vs.reduce<number>((a, b) => a + toInt64(b), 0)), [], 'any')],
  ['add1', f((v) => int64(toInt64(v) + 1), ['any'])],
  ['sub', f((a, b) => int64(toInt64(a) - toInt64(b)), ['any', 'any'])],
  ['mul', f((a, ...vs) => int64(vs.reduce<number>((x, y) => x * toInt64(y), toInt64(a))), ['any'], 'any')],
  ['div', f((a, b) => {
    if (toInt64(b) === 0) throw new FuncError('integer divide by zero');
    return int64(Math.trunc(toInt64(a) / toInt64(b)));
  }, ['any', 'any'])],
  ['mod', f((a, b) => {
    if (toInt64(b) === 0) throw new FuncError('integer divide by zero');
    return int64(toInt64(a) % toInt64(b));
  }, ['any', 'any'])],
  ['max', f((a, ...vs) => int64(Math.max(toInt64(a), ...vs.map(toInt64))), ['any'], 'any')],
  ['min', f((a, ...vs) => int64(Math.min(toInt64(a), ...vs.map(toInt64))), ['any'], 'any')],
  ['until', f((n) => Array.from({ length: Math.max(0, n as number) }, (_x, i) => new GoInt(i)), ['int'])],
  // Lists.
  ['list', f((...vs) => vs, [], 'any')],
  ['append', f((l, v) => [...list(l, 'push'), v], ['any', 'any'])],
  ['push', f((l, v) => [...list(l, 'push'), v], ['any', 'any'])],
  ['prepend', f((l, v) => [v, ...list(l, 'prepend')], ['any', 'any'])],
  ['first', f((l) => list(l, 'find first')[0] ?? null, ['any'])],
  ['last', f((l) => list(l, 'find last').at(-1) ?? null, ['any'])],
  ['rest', f((l) => list(l, 'find rest').slice(1), ['any'])],
  ['initial', f((l) => list(l, 'find initial').slice(0, -1), ['any'])],
  ['compact', f((l) => list(l, 'compact').filter((x) => !empty(x)), ['any'])],
  ['uniq', f((l) => list(l, 'uniq').filter((x, i, all) => all.findIndex((y) => formatValue(y) === formatValue(x) && typeName(y) === typeName(x)) === i), ['any'])],
  ['has', f((needle, l) => (l === null ? false : list(l, 'has').some((x) => formatValue(x) === formatValue(needle) && typeName(x) === typeName(needle))), ['any', 'any'])],
  ['without', f((l, ...omit) => list(l, 'without').filter((x) => !omit.some((o) => formatValue(o) === formatValue(x))), ['any'], 'any')],
  ['sortAlpha', f((l) => strslice(l).sort(compareStrings), ['any'])],
  // Dicts.
  ['dict', f(dict, [], 'any')],
  ['get', f((m, k) => asMap(m, 'get').entries.get(k as string) ?? '', ['map', 'string'])],
  ['set', f((m, k, val) => {
    asMap(m, 'set').entries.set(k as string, val);
    return m;
  }, ['map', 'string', 'any'])],
  ['unset', f((m, k) => {
    asMap(m, 'unset').entries.delete(k as string);
    return m;
  }, ['map', 'string'])],
  ['hasKey', f((m, k) => asMap(m, 'hasKey').entries.has(k as string), ['map', 'string'])],
  ['keys', f((...ms) => ms.flatMap((m) => [...asMap(m, 'keys').entries.keys()]), [], 'map')],
  ['values', f((m) => [...asMap(m, 'values').entries.values()], ['map'])],
  ['pick', f((m, ...ks) => {
    const src = asMap(m, 'pick');
    return new GoMap(new Map([...src.entries].filter(([k]) => ks.includes(k))), src.type);
  }, ['map'], 'string')],
  ['dig', f((...args) => {
    const m = asMap(args.at(-1), 'dig');
    const def = args.at(-2);
    const keys = args.slice(0, -2).map(strval);
    let cur: unknown = m;
    for (const k of keys) {
      if (!(cur instanceof GoMap) || !cur.entries.has(k)) return def;
      cur = cur.entries.get(k);
    }
    return cur;
  }, [], 'any')],
  ['deepCopy', f((v) => deepCopy(v), ['any'])],
  // Types and encodings.
  ['typeOf', f((v) => typeName(v), ['any'])],
  ['kindOf', f((v) => kindOf(v), ['any'])],
  ['kindIs', f((k, v) => kindOf(v) === k, ['string', 'any'])],
  ['toPrettyJson', f((v) => JSON.stringify(toPlain(v), null, 2), ['any'])],
  ['toRawJson', f((v) => JSON.stringify(toPlain(v)), ['any'])],
  ['fromJson', f((s) => {
    try {
      return dynamicFromJSON(JSON.parse(s as string));
    } catch {
      return new GoMap(new Map(), MAP_ANY);
    }
  }, ['string'])],
]);

function kindOf(v: unknown): string {
  if (v === null || v === undefined) return 'invalid';
  if (typeof v === 'string') return 'string';
  if (typeof v === 'boolean') return 'bool';
  if (typeof v === 'number') return 'float64';
  if (v instanceof GoInt || v instanceof GoEnum) return v.type.name.replace(/^.*\./, '') === v.type.name ? v.type.name : 'int32';
  if (v instanceof GoMap) return 'map';
  if (Array.isArray(v)) return 'slice';
  if (v instanceof GoNil) return v.type.kind === 'slice' ? 'slice' : 'ptr';
  if (v instanceof GoStruct) return v.type.kind === 'ptr' ? 'ptr' : 'struct';
  if (v instanceof GoStringer) return 'struct';
  return 'invalid';
}
