import type * as protobuf from 'protobufjs';
import { protobufLibrary } from '../shared/protobuf-library';
import { envoyProtos } from '../envoy/protos';

/**
 * Canonical proto3 JSON of Envoy messages, whichever way they were written: a proxy's admin
 * config dump (proto3 JSON: `"5s"` durations, wrappers as plain values, Structs as plain JSON,
 * snake_case names) or objects decoded with our protos (`{ seconds: '5' }`, Structs as
 * `{ fields: ... }`). Both read the same message the same way, so two dumps compare field by
 * field. The output is what the incumbent prints (lowerCamelCase names, fields in declaration
 * order, default values left out, map keys sorted). Fields a message does not declare are
 * kept as they are, keys sorted, so nothing is lost from a dump made with newer protos.
 */

export type Json = null | boolean | number | string | Json[] | { [key: string]: Json };
type JsonObject = { [key: string]: Json };

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v) && !(v instanceof Uint8Array);
const camel = (name: string): string => name.replace(/_([a-z0-9])/g, (_, c: string) => c.toUpperCase());

/** The message type named by a type URL or full name; undefined when our protos lack it. */
export function lookupMessage(typeUrlOrName: string): protobuf.Type | undefined {
  const name = typeUrlOrName.slice(typeUrlOrName.lastIndexOf('/') + 1);
  try {
    const found = envoyProtos().lookup(name);
    return found instanceof protobufLibrary().Type ? found : undefined;
  } catch {
    return undefined;
  }
}

/** `value` as message `type`, in canonical proto3 JSON. */
export function canonicalMessage(type: protobuf.Type, value: unknown): Json {
  const full = type.fullName.replace(/^\./, '');
  const special = WELL_KNOWN[full];
  if (special) return special(value);
  if (!isObject(value)) return plain(value);
  const out: JsonObject = {};
  const used = new Set<string>();
  for (const field of type.fieldsArray) {
    const json = camel(field.name);
    const key = field.name in value ? field.name : json in value ? json : undefined;
    if (key === undefined) continue;
    used.add(key);
    const converted = fieldValue(field, value[key]);
    if (converted !== undefined) out[json] = converted;
  }
  for (const [key, v] of Object.entries(value)) if (!used.has(key)) out[key] = plain(v);
  return out;
}

function fieldValue(field: protobuf.Field, v: unknown): Json | undefined {
  if (v === undefined || v === null) return undefined;
  field.resolve();
  if (field instanceof protobufLibrary().MapField || field.map) {
    if (!isObject(v)) return plain(v);
    const entries = Object.keys(v).sort().map((k) => [k, element(field, v[k])] as const);
    return entries.length > 0 ? Object.fromEntries(entries) : undefined;
  }
  if (field.repeated) {
    if (!Array.isArray(v)) return plain(v);
    return v.length > 0 ? v.map((e) => element(field, e)) : undefined;
  }
  const converted = element(field, v);
  // proto3 leaves scalars and enums at their default out, unless a oneof says which is set.
  if (!field.partOf && isDefault(field, converted)) return undefined;
  return converted;
}

function isDefault(field: protobuf.Field, v: Json): boolean {
  if (field.resolvedType instanceof protobufLibrary().Type) return false;
  if (field.resolvedType instanceof protobufLibrary().Enum) return typeof v === 'string' ? field.resolvedType.values[v] === 0 : v === 0;
  return v === 0 || v === '' || v === false || v === '0';
}

function element(field: protobuf.Field, v: unknown): Json {
  const t = field.resolvedType;
  if (t instanceof protobufLibrary().Type) return canonicalMessage(t, v);
  if (t instanceof protobufLibrary().Enum) {
    if (typeof v === 'number') return t.valuesById[v] ?? v;
    if (typeof v === 'string' && /^-?\d+$/.test(v)) return t.valuesById[Number(v)] ?? Number(v);
    return plain(v);
  }
  return scalar(field.type, v);
}

const LONG_TYPES = new Set(['int64', 'uint64', 'sint64', 'fixed64', 'sfixed64']);
const INT_TYPES = new Set(['int32', 'uint32', 'sint32', 'fixed32', 'sfixed32']);

function scalar(type: string, v: unknown): Json {
  if (LONG_TYPES.has(type)) return typeof v === 'string' || typeof v === 'number' || typeof v === 'bigint' ? String(v) : isObject(v) && 'low' in v ? protobufLibrary().util.LongBits.from(v as never).toNumber().toString() : plain(v);
  if (INT_TYPES.has(type)) return typeof v === 'string' && /^-?\d+$/.test(v) ? Number(v) : plain(v);
  if (type === 'double' || type === 'float') return typeof v === 'string' && v !== '' && !Number.isNaN(Number(v)) ? Number(v) : plain(v);
  if (type === 'bytes') return v instanceof Uint8Array ? Buffer.from(v).toString('base64') : plain(v);
  return plain(v);
}

/** Any other value: JSON with object keys sorted (binary as base64). */
function plain(v: unknown): Json {
  if (v === undefined || v === null) return null;
  if (v instanceof Uint8Array) return Buffer.from(v).toString('base64');
  if (Array.isArray(v)) return v.map(plain);
  if (isObject(v)) return Object.fromEntries(Object.keys(v).sort().map((k) => [k, plain(v[k])]));
  if (typeof v === 'bigint') return v.toString();
  return v as Json;
}

// ---- well-known types ----

const WRAPPER_SCALARS: Record<string, string> = {
  'google.protobuf.DoubleValue': 'double',
  'google.protobuf.FloatValue': 'float',
  'google.protobuf.Int64Value': 'int64',
  'google.protobuf.UInt64Value': 'uint64',
  'google.protobuf.Int32Value': 'int32',
  'google.protobuf.UInt32Value': 'uint32',
  'google.protobuf.BoolValue': 'bool',
  'google.protobuf.StringValue': 'string',
  'google.protobuf.BytesValue': 'bytes',
};

const VALUE_KINDS = ['null_value', 'number_value', 'string_value', 'bool_value', 'struct_value', 'list_value'];

const WELL_KNOWN: Record<string, (v: unknown) => Json> = {
  'google.protobuf.Any': anyJson,
  'google.protobuf.Duration': durationJson,
  'google.protobuf.Timestamp': timestampJson,
  'google.protobuf.Struct': structJson,
  'google.protobuf.Value': valueJson,
  'google.protobuf.ListValue': listJson,
  'google.protobuf.Empty': () => ({}),
  ...Object.fromEntries(
    Object.entries(WRAPPER_SCALARS).map(([name, type]) => [name, (v: unknown) => scalar(type, isObject(v) && 'value' in v ? v.value : isObject(v) && Object.keys(v).length === 0 ? defaultOf(type) : v)]),
  ),
};

function defaultOf(type: string): unknown {
  return type === 'bool' ? false : type === 'string' || type === 'bytes' ? '' : 0;
}

/** `{ '@type', ...fields }` (JSON; well-known types as `{ '@type', value }`), or `{ type_url, value }` encoded. */
function anyJson(v: unknown): Json {
  if (!isObject(v)) return plain(v);
  if (typeof v['@type'] === 'string') {
    const typeUrl = v['@type'];
    const type = lookupMessage(typeUrl);
    if (!type) return plain(v);
    const { '@type': _ignored, ...rest } = v;
    if (WELL_KNOWN[type.fullName.replace(/^\./, '')]) {
      const inner = Object.keys(rest).length === 1 && 'value' in rest ? rest.value : rest;
      return { '@type': typeUrl, value: canonicalMessage(type, inner) };
    }
    const body = canonicalMessage(type, rest);
    return isObject(body) ? { '@type': typeUrl, ...(body as JsonObject) } : { '@type': typeUrl, value: body };
  }
  const typeUrl = v.type_url ?? v.typeUrl;
  const value = v.value;
  if (typeof typeUrl === 'string') {
    const type = lookupMessage(typeUrl);
    const bytes = typeof value === 'string' ? Buffer.from(value, 'base64') : value instanceof Uint8Array ? value : undefined;
    if (type && bytes) {
      try {
        const decoded = type.toObject(type.decode(bytes), { json: true, longs: String, enums: String, bytes: String });
        return anyJson({ '@type': typeUrl, ...decoded });
      } catch {
        // not a message of that type: kept as it came
      }
    }
  }
  return plain(v);
}

/** `"<seconds>[.<fraction>]s"` with 0, 3, 6 or 9 fractional digits, as Go writes it. */
function durationJson(v: unknown): Json {
  let seconds: bigint;
  let nanos: number;
  if (typeof v === 'string') {
    const m = /^(-)?(\d+)(?:\.(\d{1,9}))?s$/.exec(v.trim());
    if (!m) return v;
    seconds = BigInt(m[2]);
    nanos = Number((m[3] ?? '').padEnd(9, '0'));
    if (m[1]) {
      seconds = -seconds;
      nanos = -nanos;
    }
  } else if (isObject(v)) {
    seconds = BigInt(String(v.seconds ?? 0));
    nanos = Number(v.nanos ?? 0);
  } else {
    return plain(v);
  }
  const negative = seconds < 0n || nanos < 0;
  const abs = (seconds < 0n ? -seconds : seconds).toString();
  return `${negative ? '-' : ''}${abs}${fraction(Math.abs(nanos))}s`;
}

function fraction(nanos: number): string {
  if (nanos === 0) return '';
  const digits = String(nanos).padStart(9, '0');
  if (nanos % 1_000_000 === 0) return `.${digits.slice(0, 3)}`;
  if (nanos % 1000 === 0) return `.${digits.slice(0, 6)}`;
  return `.${digits}`;
}

/** RFC 3339 in UTC with 0, 3, 6 or 9 fractional digits, as Go writes it. */
function timestampJson(v: unknown): Json {
  let seconds: number;
  let nanos: number;
  if (typeof v === 'string') {
    const m = /^(.*?)(?:\.(\d{1,9}))?(Z|[+-]\d\d:\d\d)$/.exec(v.trim());
    const ms = Date.parse(m ? `${m[1]}${m[3]}` : v);
    if (!m || Number.isNaN(ms)) return v;
    seconds = Math.floor(ms / 1000);
    nanos = Number((m[2] ?? '').padEnd(9, '0'));
  } else if (isObject(v)) {
    seconds = Number(v.seconds ?? 0);
    nanos = Number(v.nanos ?? 0);
  } else {
    return plain(v);
  }
  return `${new Date(seconds * 1000).toISOString().slice(0, 19)}${fraction(nanos)}Z`;
}

/** A Struct as proto3 JSON writes it: a plain object. Our decoded form (`{ fields }`) is unwrapped. */
function structJson(v: unknown): Json {
  if (!isObject(v)) return plain(v);
  if (isStructForm(v)) {
    const fields = v.fields as Record<string, unknown>;
    return Object.fromEntries(Object.keys(fields).sort().map((k) => [k, valueJson(fields[k])]));
  }
  return plain(v);
}

function isStructForm(v: Record<string, unknown>): boolean {
  const keys = Object.keys(v);
  return keys.length === 1 && keys[0] === 'fields' && isObject(v.fields) && Object.values(v.fields).every(isValueForm);
}

function isValueForm(v: unknown): boolean {
  if (!isObject(v)) return false;
  const keys = Object.keys(v).filter((k) => k !== 'kind');
  return keys.length === 1 && (VALUE_KINDS.includes(keys[0]) || VALUE_KINDS.map(camel).includes(keys[0]));
}

function valueJson(v: unknown): Json {
  if (!isValueForm(v)) return plain(v);
  const o = v as Record<string, unknown>;
  const pick = (k: string) => o[k] ?? o[camel(k)];
  if ('null_value' in o || 'nullValue' in o) return null;
  if ('number_value' in o || 'numberValue' in o) return Number(pick('number_value'));
  if ('string_value' in o || 'stringValue' in o) return String(pick('string_value'));
  if ('bool_value' in o || 'boolValue' in o) return Boolean(pick('bool_value'));
  if ('struct_value' in o || 'structValue' in o) return structJson(pick('struct_value') ?? {});
  return listJson(pick('list_value') ?? {});
}

function listJson(v: unknown): Json {
  if (Array.isArray(v)) return v.map(plain);
  if (isObject(v) && Array.isArray(v.values) && Object.keys(v).length === 1) return v.values.map((e) => (isValueForm(e) ? valueJson(e) : plain(e)));
  if (isObject(v) && Object.keys(v).length === 0) return [];
  return plain(v);
}
