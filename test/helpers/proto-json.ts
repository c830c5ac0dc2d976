/**
 * Our plain snake_case Envoy objects as the proto3 JSON mapping writes them (what `protoc`-based
 * tools and the incumbent's YAML show): encoded with our protos first, so only what reaches the
 * wire is compared; then lowerCamelCase field names, `@type` plus the fields for an Any, enums
 * by name, 64-bit integers as strings, wrappers and other well-known types in their JSON form,
 * map keys unchanged, and fields at their default value left out unless they have presence
 * (message fields, oneof members, proto3 `optional`).
 */
import * as protobuf from 'protobufjs';
import { encodeMessage, messageType } from '../../src/modules/envoy/protos';

export type Json = null | boolean | number | string | Json[] | { [key: string]: Json };

/** `object` (a message of `typeUrlOrName`, in our snake_case form) in proto3 JSON. */
export function toProtoJson(typeUrlOrName: string, object: object): { [key: string]: Json } {
  const type = messageType(typeUrlOrName);
  const json = messageJson(type, type.decode(encodeMessage(typeUrlOrName, object)) as Decoded);
  if (json === null || typeof json !== 'object' || Array.isArray(json)) throw new Error(`${type.fullName} has a non-object JSON form; compare its value instead`);
  return json;
}

const LONG_TYPES = new Set(['int64', 'uint64', 'sint64', 'fixed64', 'sfixed64']);
const WRAPPERS = new Set(['Double', 'Float', 'Int64', 'UInt64', 'Int32', 'UInt32', 'Bool', 'String', 'Bytes'].map((n) => `.google.protobuf.${n}Value`));
/** Well-known types whose JSON form is not an object of their fields; an Any holding one nests it under `value`. */
const SPECIAL_JSON = new Set([...WRAPPERS, '.google.protobuf.Duration', '.google.protobuf.Timestamp', '.google.protobuf.Struct', '.google.protobuf.Value', '.google.protobuf.ListValue', '.google.protobuf.FieldMask']);

type Decoded = protobuf.Message & Record<string, unknown>;

/** One message in proto3 JSON (an object for ordinary messages; other shapes for well-known types). */
export function messageJson(type: protobuf.Type, message: Decoded): Json {
  const name = type.fullName;
  if (name === '.google.protobuf.Any') return anyJson(message);
  if (WRAPPERS.has(name)) return scalarJson(type.fields.value, message.value);
  if (name === '.google.protobuf.Duration') return durationJson(message);
  if (name === '.google.protobuf.Timestamp') return timestampJson(message);
  if (name === '.google.protobuf.Struct') return structJson(type, message);
  if (name === '.google.protobuf.ListValue') return ((message.values as Decoded[] | undefined) ?? []).map((v) => messageJson(type.lookupType('Value'), v));
  if (name === '.google.protobuf.Value') return valueJson(type, message);
  if (name === '.google.protobuf.FieldMask') return ((message.paths as string[] | undefined) ?? []).map(jsonName).join(',');

  const out: { [key: string]: Json } = {};
  for (const field of type.fieldsArray) {
    field.resolve();
    const value = message[field.name];
    const key = (field.options?.json_name as string | undefined) ?? jsonName(field.name);
    if (field.map) {
      const entries = Object.entries((value as Record<string, unknown> | undefined) ?? {});
      if (entries.length > 0) out[key] = Object.fromEntries(entries.map(([k, v]) => [k, fieldJson(field, v)]));
    } else if (field.repeated) {
      const list = (value as unknown[] | undefined) ?? [];
      if (list.length > 0) out[key] = list.map((v) => fieldJson(field, v));
    } else if (hasPresence(field)) {
      if (isSet(field, message)) out[key] = fieldJson(field, value);
    } else if (!isDefault(field, value)) {
      out[key] = fieldJson(field, value);
    }
  }
  return out;
}

/** proto3 JSON names: `prefix_len` → `prefixLen`. */
function jsonName(protoName: string): string {
  return protoName.replace(/_(.)/g, (_, c: string) => c.toUpperCase());
}

function hasPresence(field: protobuf.Field): boolean {
  return field.partOf !== null || field.resolvedType instanceof protobuf.Type;
}

/** Decoded messages hold set fields as own properties; defaults live on the prototype. */
function isSet(field: protobuf.Field, message: Decoded): boolean {
  if (field.partOf) return message[field.partOf.name] === field.name;
  return Object.prototype.hasOwnProperty.call(message, field.name) && message[field.name] !== null && message[field.name] !== undefined;
}

function isDefault(field: protobuf.Field, value: unknown): boolean {
  if (value === undefined || value === null) return true;
  if (LONG_TYPES.has(field.type)) return String(value) === '0';
  if (value instanceof Uint8Array) return value.length === 0;
  return value === 0 || value === '' || value === false;
}

function fieldJson(field: protobuf.Field, value: unknown): Json {
  const resolved = field.resolvedType;
  if (resolved instanceof protobuf.Type) return messageJson(resolved, value as Decoded);
  if (resolved instanceof protobuf.Enum) return resolved.valuesById[value as number] ?? (value as number);
  return scalarJson(field, value);
}

function scalarJson(field: protobuf.Field, value: unknown): Json {
  if (LONG_TYPES.has(field.type)) return String(value ?? 0);
  if (field.type === 'bytes') return Buffer.from((value as Uint8Array | undefined) ?? []).toString('base64');
  if (typeof value === 'number' && !Number.isFinite(value)) return Number.isNaN(value) ? 'NaN' : value > 0 ? 'Infinity' : '-Infinity';
  if (value === undefined || value === null) return field.type === 'bool' ? false : field.type === 'string' ? '' : 0;
  return value as Json;
}

function anyJson(message: Decoded): Json {
  const typeUrl = String(message.type_url ?? '');
  if (typeUrl === '') return {};
  const inner = messageType(typeUrl);
  const json = messageJson(inner, inner.decode((message.value as Uint8Array | undefined) ?? new Uint8Array()) as Decoded);
  if (SPECIAL_JSON.has(inner.fullName)) return { '@type': typeUrl, value: json };
  return { '@type': typeUrl, ...(json as { [key: string]: Json }) };
}

function durationJson(message: Decoded): string {
  const seconds = BigInt(String(message.seconds ?? 0));
  const nanos = Number(message.nanos ?? 0);
  const negative = seconds < 0n || nanos < 0;
  const abs = (seconds < 0n ? -seconds : seconds).toString();
  return `${negative ? '-' : ''}${abs}${fraction(Math.abs(nanos))}s`;
}

function timestampJson(message: Decoded): string {
  const ms = Number(String(message.seconds ?? 0)) * 1000;
  return new Date(ms).toISOString().replace(/\.\d{3}Z$/, `${fraction(Number(message.nanos ?? 0))}Z`);
}

/** Nanoseconds as 0, 3, 6 or 9 fractional digits, as proto3 JSON writes them. */
function fraction(nanos: number): string {
  if (nanos === 0) return '';
  const digits = String(nanos).padStart(9, '0');
  const trimmed = digits.endsWith('000000') ? digits.slice(0, 3) : digits.endsWith('000') ? digits.slice(0, 6) : digits;
  return `.${trimmed}`;
}

function structJson(type: protobuf.Type, message: Decoded): Json {
  const valueType = type.lookupType('Value');
  const fields = (message.fields as Record<string, Decoded> | undefined) ?? {};
  return Object.fromEntries(Object.entries(fields).map(([k, v]) => [k, messageJson(valueType, v)]));
}

function valueJson(type: protobuf.Type, message: Decoded): Json {
  switch (message.kind) {
    case 'null_value':
      return null;
    case 'number_value':
      return message.number_value as number;
    case 'string_value':
      return message.string_value as string;
    case 'bool_value':
      return message.bool_value as boolean;
    case 'struct_value':
      return structJson(type.lookupType('Struct'), message.struct_value as Decoded);
    case 'list_value':
      return messageJson(type.lookupType('ListValue'), message.list_value as Decoded);
    default:
      return null;
  }
}
