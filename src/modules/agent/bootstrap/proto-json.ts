/**
 * Strict reading of proto3 JSON (what Envoy reads from a bootstrap file: field names in
 * snake_case or lowerCamelCase, durations as `"1s"`, wrappers as bare values, Struct as plain
 * JSON, Any as `{ "@type": ..., fields }`) against the Envoy protos.
 *
 * protobufjs's own `fromObject` drops fields it does not know, so a misspelt field in a
 * bootstrap override would vanish silently and Envoy would then reject (or ignore) it; here
 * every unknown field, wrong type, unknown enum value, clashing oneof and unknown Any type is an
 * error naming its path.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import type * as protobuf from 'protobufjs';
import { protobufLibrary } from '../../shared/protobuf-library';
import { envoyProtoDirs, envoyProtos, loadMoreEnvoyProtos } from '../../envoy/protos';

export class ProtoJsonError extends Error {
  constructor(
    /** Where in the document, e.g. `static_resources.clusters[2].connect_timeout`. */
    readonly at: string,
    readonly reason: string,
  ) {
    super(`${at || '(top level)'}: ${reason}`);
  }
}

export type Json = null | boolean | number | string | Json[] | { [key: string]: Json };
type JsonObject = { [key: string]: Json };

const WRAPPERS = new Set(['Double', 'Float', 'Int64', 'UInt64', 'Int32', 'UInt32', 'Bool', 'String', 'Bytes'].map((n) => `.google.protobuf.${n}Value`));
/** Well-known types whose JSON form is not an object of their fields (an Any holding one nests it under `value`). */
const SPECIAL_JSON = new Set([
  ...WRAPPERS,
  '.google.protobuf.Duration',
  '.google.protobuf.Timestamp',
  '.google.protobuf.Struct',
  '.google.protobuf.Value',
  '.google.protobuf.ListValue',
  '.google.protobuf.FieldMask',
]);

export function isPlainObject(value: unknown): value is JsonObject {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}

/** `a.b` / `a[0]` path joining for messages. */
export function childPath(at: string, key: string | number): string {
  return typeof key === 'number' ? `${at}[${key}]` : at ? `${at}.${key}` : key;
}

const fieldIndex = new WeakMap<protobuf.Type, Map<string, protobuf.Field>>();

/** The field a JSON key names: its proto name, its lowerCamelCase JSON name, or an explicit `json_name`. */
export function fieldForKey(type: protobuf.Type, key: string): protobuf.Field | undefined {
  let index = fieldIndex.get(type);
  if (!index) {
    index = new Map();
    for (const field of type.fieldsArray) {
      field.resolve();
      index.set(field.name, field);
      index.set(lowerCamel(field.name), field);
      const explicit = field.options?.json_name as string | undefined;
      if (explicit) index.set(explicit, field);
    }
    fieldIndex.set(type, index);
  }
  return index.get(key);
}

function lowerCamel(name: string): string {
  return name.replace(/_([a-z0-9])/g, (_, c: string) => c.toUpperCase());
}

export function isSpecialJson(type: protobuf.Type): boolean {
  return SPECIAL_JSON.has(type.fullName);
}

/**
 * The message type a type URL or name refers to, loading the proto file of its package on first
 * use when the shared root does not have it yet (bootstrap extensions such as access loggers
 * are not among the protos the daemon needs).
 */
export function messageTypeByName(typeUrlOrName: string): protobuf.Type | undefined {
  const name = typeUrlOrName.slice(typeUrlOrName.lastIndexOf('/') + 1);
  if (!/^[A-Za-z_][\w.]*$/.test(name)) return undefined;
  const found = lookupType(envoyProtos(), name);
  if (found) return found;
  const files = protoFilesOfPackage(name);
  if (files.length === 0) return undefined;
  try {
    return lookupType(loadMoreEnvoyProtos(files), name);
  } catch {
    return undefined;
  }
}

function lookupType(root: protobuf.Root, name: string): protobuf.Type | undefined {
  const found = root.lookup(name);
  return found instanceof protobufLibrary().Type ? found : undefined;
}

/** The `.proto` files of the package a message name lives in (nested messages: the longest package prefix with files). */
function protoFilesOfPackage(name: string): string[] {
  const parts = name.split('.');
  for (let cut = parts.length - 1; cut > 0; cut--) {
    const relDir = parts.slice(0, cut).join('/');
    for (const dir of envoyProtoDirs()) {
      const abs = path.join(dir, relDir);
      if (!fs.existsSync(abs) || !fs.statSync(abs).isDirectory()) continue;
      const files = fs.readdirSync(abs).filter((f) => f.endsWith('.proto'));
      if (files.length > 0) return files.map((f) => `${relDir}/${f}`);
    }
  }
  return [];
}

/**
 * Reads `json` as a `type` message and returns it in protobufjs object form (snake_case field
 * names, Duration as `{ seconds, nanos }`, Struct as `{ fields }`, Any as `{ '@type', ...fields }`),
 * ready for `encodeMessage`. Throws ProtoJsonError at the first problem.
 */
export function protoJsonToObject(type: protobuf.Type, json: unknown, at = ''): Record<string, unknown> {
  return messageValue(type, json, at) as Record<string, unknown>;
}

function fail(at: string, reason: string): never {
  throw new ProtoJsonError(at, reason);
}

function describe(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'a list';
  if (typeof value === 'object') return 'an object';
  return `${typeof value} ${JSON.stringify(value)}`;
}

function messageValue(type: protobuf.Type, json: unknown, at: string): unknown {
  switch (type.fullName) {
    case '.google.protobuf.Any':
      return anyValue(json, at);
    case '.google.protobuf.Duration':
      return durationValue(json, at);
    case '.google.protobuf.Timestamp':
      return timestampValue(json, at);
    case '.google.protobuf.Struct':
      if (!isPlainObject(json)) fail(at, `expected an object (google.protobuf.Struct), got ${describe(json)}`);
      return structValue(json, at);
    case '.google.protobuf.Value':
      return valueValue(json, at);
    case '.google.protobuf.ListValue':
      if (!Array.isArray(json)) fail(at, `expected a list (google.protobuf.ListValue), got ${describe(json)}`);
      return { values: json.map((v, i) => valueValue(v, childPath(at, i))) };
    case '.google.protobuf.FieldMask':
      if (typeof json !== 'string') fail(at, `expected a string of comma-separated field paths, got ${describe(json)}`);
      return { paths: json === '' ? [] : json.split(',').map((p) => p.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`)) };
  }
  if (WRAPPERS.has(type.fullName)) return { value: scalarValue(type.fields.value, json as Json, at) };
  if (!isPlainObject(json)) fail(at, `expected an object (${type.fullName.slice(1)}), got ${describe(json)}`);
  const out: Record<string, unknown> = {};
  const oneofMember = new Map<string, string>();
  for (const [key, value] of Object.entries(json)) {
    const here = childPath(at, key);
    const field = fieldForKey(type, key);
    if (!field) fail(here, `unknown field of ${type.fullName.slice(1)}${suggestion(type, key)}`);
    // proto3 JSON: null is the field's default, i.e. not set (google.protobuf.Value reads it as null_value).
    if (value === null && field.resolvedType?.fullName !== '.google.protobuf.Value') continue;
    if (field.partOf) {
      const other = oneofMember.get(field.partOf.name);
      if (other) fail(here, `${other} and ${field.name} are alternatives (oneof ${field.partOf.name}); set only one`);
      oneofMember.set(field.partOf.name, field.name);
    }
    if (out[field.name] !== undefined) fail(here, `field ${field.name} is given twice (as ${key} and under its other name)`);
    out[field.name] = fieldValue(field, value, here);
  }
  return out;
}

function suggestion(type: protobuf.Type, key: string): string {
  const want = key.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`).replace(/-/g, '_').toLowerCase();
  const close = type.fieldsArray.map((f) => f.name).filter((n) => n === want || editDistance(n, want) <= 2);
  const known = type.fieldsArray.map((f) => f.name);
  return close.length > 0 ? ` (did you mean ${close.join(' or ')}?)` : known.length <= 12 ? ` (fields: ${known.join(', ')})` : '';
}

function editDistance(a: string, b: string): number {
  const row = Array.from({ length: b.length + 1 }, (_, i) => i);
  for (let i = 1; i <= a.length; i++) {
    let prev = row[0];
    row[0] = i;
    for (let j = 1; j <= b.length; j++) {
      const cur = row[j];
      row[j] = Math.min(row[j] + 1, row[j - 1] + 1, prev + (a[i - 1] === b[j - 1] ? 0 : 1));
      prev = cur;
    }
  }
  return row[b.length];
}

function fieldValue(field: protobuf.Field, value: Json, at: string): unknown {
  if (field.map) {
    if (!isPlainObject(value)) fail(at, `expected an object (a map), got ${describe(value)}`);
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value)) out[k] = singleValue(field, v, childPath(at, k));
    return out;
  }
  if (field.repeated) {
    if (!Array.isArray(value)) fail(at, `expected a list, got ${describe(value)}`);
    return value.map((v, i) => singleValue(field, v, childPath(at, i)));
  }
  return singleValue(field, value, at);
}

function singleValue(field: protobuf.Field, value: Json, at: string): unknown {
  const resolved = field.resolvedType;
  if (resolved instanceof protobufLibrary().Type) return messageValue(resolved, value, at);
  if (resolved instanceof protobufLibrary().Enum) return enumValue(resolved, value, at);
  return scalarValue(field, value, at);
}

function enumValue(type: protobuf.Enum, value: Json, at: string): string {
  if (typeof value === 'string' && value in type.values) return value;
  if (typeof value === 'number' && Number.isInteger(value)) {
    const name = type.valuesById[value];
    if (name !== undefined) return name;
  }
  return fail(at, `expected one of ${Object.keys(type.values).join(', ')} (${type.fullName.slice(1)}), got ${describe(value)}`);
}

const INT_RANGES: Record<string, [number, number]> = {
  int32: [-(2 ** 31), 2 ** 31 - 1],
  sint32: [-(2 ** 31), 2 ** 31 - 1],
  sfixed32: [-(2 ** 31), 2 ** 31 - 1],
  uint32: [0, 2 ** 32 - 1],
  fixed32: [0, 2 ** 32 - 1],
};
const LONG_RANGES: Record<string, [bigint, bigint]> = {
  int64: [-(2n ** 63n), 2n ** 63n - 1n],
  sint64: [-(2n ** 63n), 2n ** 63n - 1n],
  sfixed64: [-(2n ** 63n), 2n ** 63n - 1n],
  uint64: [0n, 2n ** 64n - 1n],
  fixed64: [0n, 2n ** 64n - 1n],
};

function scalarValue(field: protobuf.Field, value: Json, at: string): unknown {
  const t = field.type;
  if (t === 'string') {
    if (typeof value !== 'string') fail(at, `expected a string, got ${describe(value)}`);
    return value;
  }
  if (t === 'bool') {
    if (typeof value !== 'boolean') fail(at, `expected true or false, got ${describe(value)}`);
    return value;
  }
  if (t === 'bytes') {
    if (typeof value !== 'string' || !/^[A-Za-z0-9+/_-]*={0,2}$/.test(value)) fail(at, `expected base64 bytes, got ${describe(value)}`);
    return value;
  }
  if (t === 'double' || t === 'float') {
    if (typeof value === 'number') return value;
    if (value === 'NaN' || value === 'Infinity' || value === '-Infinity') return Number(value);
    if (typeof value === 'string' && value.trim() !== '' && Number.isFinite(Number(value))) return Number(value);
    return fail(at, `expected a number, got ${describe(value)}`);
  }
  const range = INT_RANGES[t];
  if (range) {
    const n = typeof value === 'string' && /^-?\d+$/.test(value) ? Number(value) : value;
    if (typeof n !== 'number' || !Number.isInteger(n) || n < range[0] || n > range[1]) {
      fail(at, `expected an integer from ${range[0]} to ${range[1]} (${t}), got ${describe(value)}`);
    }
    return n;
  }
  const longRange = LONG_RANGES[t];
  if (longRange) {
    const text = typeof value === 'number' && Number.isInteger(value) ? String(value) : typeof value === 'string' && /^-?\d+$/.test(value) ? value : undefined;
    if (text === undefined || BigInt(text) < longRange[0] || BigInt(text) > longRange[1]) fail(at, `expected an integer (${t}), got ${describe(value)}`);
    const n = Number(text);
    if (Number.isSafeInteger(n)) return n;
    // Beyond 2^53: the { low, high } form protobufjs takes for 64-bit fields.
    const bits = BigInt.asUintN(64, BigInt(text));
    return { low: Number(bits & 0xffffffffn) | 0, high: Number(bits >> 32n) | 0, unsigned: t === 'uint64' || t === 'fixed64' };
  }
  return fail(at, `cannot read a field of type ${t}`);
}

function anyValue(json: unknown, at: string): unknown {
  if (!isPlainObject(json)) fail(at, `expected an object with "@type" (google.protobuf.Any), got ${describe(json)}`);
  const url = json['@type'];
  if (typeof url !== 'string' || !url.includes('/')) fail(childPath(at, '@type'), `expected a type URL such as "type.googleapis.com/<message>", got ${describe(url)}`);
  const inner = messageTypeByName(url);
  if (!inner) fail(childPath(at, '@type'), `unknown type ${url} (no such message among the Envoy protos)`);
  const { '@type': _type, ...rest } = json;
  let fields: unknown;
  if (isSpecialJson(inner)) {
    const extra = Object.keys(rest).filter((k) => k !== 'value');
    if (extra.length > 0) fail(childPath(at, extra[0]), `an Any holding ${inner.fullName.slice(1)} takes only "value"`);
    fields = messageValue(inner, rest.value ?? null, childPath(at, 'value'));
  } else {
    fields = messageValue(inner, rest, at);
  }
  return { '@type': url, ...(fields as object) };
}

const DURATION = /^(-)?(\d+)(?:\.(\d{1,9}))?s$/;

function durationValue(json: unknown, at: string): unknown {
  const m = typeof json === 'string' ? DURATION.exec(json) : null;
  if (!m) return fail(at, `expected a duration such as "1s" or "0.250s" (seconds with an "s" suffix), got ${describe(json)}`);
  const sign = m[1] ? -1 : 1;
  const seconds = Number(m[2]);
  if (seconds > 315_576_000_000) fail(at, 'duration out of range');
  const nanos = m[3] ? Number(m[3].padEnd(9, '0')) : 0;
  return { seconds: sign * seconds, nanos: sign * nanos };
}

function timestampValue(json: unknown, at: string): unknown {
  const ms = typeof json === 'string' && /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d{1,9})?(Z|[+-]\d{2}:\d{2})$/.test(json) ? Date.parse(json) : NaN;
  if (Number.isNaN(ms)) return fail(at, `expected an RFC 3339 time such as "2024-01-02T03:04:05Z", got ${describe(json)}`);
  const frac = /\.(\d{1,9})/.exec(json as string)?.[1] ?? '';
  return { seconds: Math.floor(ms / 1000), nanos: Number(frac.padEnd(9, '0') || 0) };
}

function structValue(json: JsonObject, at: string): unknown {
  const fields: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(json)) fields[k] = valueValue(v, childPath(at, k));
  return { fields };
}

function valueValue(json: unknown, at: string): unknown {
  if (json === null) return { null_value: 'NULL_VALUE' };
  if (typeof json === 'string') return { string_value: json };
  if (typeof json === 'number') {
    if (!Number.isFinite(json)) fail(at, 'expected a finite number');
    return { number_value: json };
  }
  if (typeof json === 'boolean') return { bool_value: json };
  if (Array.isArray(json)) return { list_value: { values: json.map((v, i) => valueValue(v, childPath(at, i))) } };
  if (isPlainObject(json)) return { struct_value: structValue(json, at) };
  return fail(at, `expected a JSON value, got ${describe(json)}`);
}
