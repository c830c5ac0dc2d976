/**
 * Merging one proto3 JSON document over another with protobuf's merge rules, the rules Envoy
 * applies to `--config-yaml` over `-c` (and the incumbent's custom bootstrap override):
 * a message field merges field by field, a list is appended to, a map's entries replace
 * entries of the same key, a scalar, enum or well-known value (duration, wrapper, Any)
 * replaces, and setting one member of a oneof clears the others.
 *
 * Both documents must already have been read with `protoJsonToObject` (so every key names a
 * field); the result uses the proto field names (snake_case), which Envoy reads as well.
 */
import type * as protobuf from 'protobufjs';
import { protobufLibrary } from '../../shared/protobuf-library';
import { fieldForKey, isPlainObject, Json } from './proto-json';

type JsonObject = { [key: string]: Json };

/** `base` with `override` merged over it; neither input is modified. */
export function mergeProtoJson(type: protobuf.Type, base: JsonObject, override: JsonObject): JsonObject {
  const out = canonicalKeys(type, base);
  for (const [key, value] of Object.entries(override)) {
    const field = fieldForKey(type, key);
    if (!field) throw new Error(`merge: ${key} is not a field of ${type.fullName.slice(1)}`);
    if (value === null) continue; // proto3 JSON null: not set, so nothing to merge
    if (field.partOf) for (const member of field.partOf.fieldsArray) if (member !== field) delete out[member.name];
    out[field.name] = mergeField(field, out[field.name], value);
  }
  return out;
}

function mergeField(field: protobuf.Field, base: Json | undefined, value: Json): Json {
  if (base === undefined) return canonicalField(field, value);
  if (field.map) return { ...(base as JsonObject), ...(canonicalField(field, value) as JsonObject) };
  if (field.repeated) return [...(base as Json[]), ...(canonicalField(field, value) as Json[])];
  const type = field.resolvedType;
  if (!(type instanceof protobufLibrary().Type)) return value;
  switch (type.fullName) {
    case '.google.protobuf.Struct':
      return { ...(base as JsonObject), ...(value as JsonObject) };
    case '.google.protobuf.ListValue':
      return [...(base as Json[]), ...(value as Json[])];
  }
  if (replacedWhole(type) || !isPlainObject(base) || !isPlainObject(value)) return canonicalField(field, value);
  return mergeProtoJson(type, base, value);
}

/** Well-known types whose JSON is one value rather than fields to merge (Any included: its type may change). */
function replacedWhole(type: protobuf.Type): boolean {
  return type.fullName.startsWith('.google.protobuf.') && type.fullName !== '.google.protobuf.Empty';
}

/** The document with every field key written as the proto field name. */
export function canonicalKeys(type: protobuf.Type, json: JsonObject): JsonObject {
  const out: JsonObject = {};
  for (const [key, value] of Object.entries(json)) {
    const field = fieldForKey(type, key);
    out[field ? field.name : key] = field ? canonicalField(field, value) : value;
  }
  return out;
}

function canonicalField(field: protobuf.Field, value: Json): Json {
  const type = field.resolvedType;
  if (!(type instanceof protobufLibrary().Type) || value === null) return value;
  const one = (v: Json): Json => canonicalMessage(type, v);
  if (field.map && isPlainObject(value)) return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, one(v)]));
  if (field.repeated && Array.isArray(value)) return value.map(one);
  return one(value);
}

function canonicalMessage(type: protobuf.Type, value: Json): Json {
  if (!isPlainObject(value)) return value;
  if (type.fullName === '.google.protobuf.Any') {
    // The held message's fields sit beside "@type"; the ones we know get their proto names.
    const url = value['@type'];
    const inner = typeof url === 'string' ? type.root.lookup(url.slice(url.lastIndexOf('/') + 1)) : null;
    if (!(inner instanceof protobufLibrary().Type) || inner.fullName.startsWith('.google.protobuf.')) return value;
    const { '@type': atType, ...rest } = value;
    return { '@type': atType, ...canonicalKeys(inner, rest) };
  }
  if (type.fullName.startsWith('.google.protobuf.')) return value;
  return canonicalKeys(type, value);
}
