import { isObject } from './json-patch';
import type { JsonSchema } from './resources';
import type { StatusCause } from './errors';

/*
 * What the real server does with a custom object against its CRD's structural schema:
 * prune unknown fields (x-kubernetes-preserve-unknown-fields keeps them), apply defaults, and
 * validate types, required fields, enums, bounds and patterns, with the real messages and field
 * paths (`spec.port: Invalid value: "string": spec.port in body must be of type integer: "string"`).
 */

/** Prunes in place and returns the paths it removed; apiVersion, kind and metadata at the root are always kept. */
export function prune(obj: Record<string, unknown>, schema: JsonSchema | undefined): string[] {
  const removed: string[] = [];
  if (!schema) return removed;
  for (const key of Object.keys(obj)) {
    if (key === 'apiVersion' || key === 'kind' || key === 'metadata') continue;
    const sub = schema.properties?.[key];
    if (sub) obj[key] = pruneValue(obj[key], sub, key, removed);
    else if (!schema['x-kubernetes-preserve-unknown-fields']) {
      delete obj[key];
      removed.push(key);
    }
  }
  return removed;
}

function pruneValue(value: unknown, schema: JsonSchema, path: string, removed: string[]): unknown {
  if (isObject(value)) {
    const embedded = schema['x-kubernetes-embedded-resource'] === true;
    for (const key of Object.keys(value)) {
      if (embedded && (key === 'apiVersion' || key === 'kind' || key === 'metadata')) continue;
      const sub = schema.properties?.[key] ?? (isObject(schema.additionalProperties) ? (schema.additionalProperties as JsonSchema) : undefined);
      if (sub) value[key] = pruneValue(value[key], sub, `${path}.${key}`, removed);
      else if (!schema['x-kubernetes-preserve-unknown-fields'] && schema.additionalProperties !== true) {
        delete value[key];
        removed.push(`${path}.${key}`);
      }
    }
    return value;
  }
  if (Array.isArray(value) && schema.items) return value.map((item, i) => pruneValue(item, schema.items as JsonSchema, `${path}[${i}]`, removed));
  return value;
}

/** Fills in `default`s of missing properties, in place (the real server defaults after pruning). */
export function applyDefaults(value: unknown, schema: JsonSchema | undefined): void {
  if (!schema) return;
  if (isObject(value)) {
    for (const [key, sub] of Object.entries(schema.properties ?? {})) {
      if (value[key] === undefined && sub.default !== undefined) value[key] = structuredClone(sub.default);
      if (value[key] !== undefined) applyDefaults(value[key], sub);
    }
    if (isObject(schema.additionalProperties)) for (const key of Object.keys(value)) if (!schema.properties?.[key]) applyDefaults(value[key], schema.additionalProperties as JsonSchema);
  } else if (Array.isArray(value) && schema.items) {
    for (const item of value) applyDefaults(item, schema.items);
  }
}

/** Problems of the object against its schema (metadata is checked elsewhere). */
export function validate(obj: Record<string, unknown>, schema: JsonSchema | undefined): StatusCause[] {
  const causes: StatusCause[] = [];
  if (!schema) return causes;
  for (const [key, sub] of Object.entries(schema.properties ?? {})) {
    if (key === 'metadata' || key === 'apiVersion' || key === 'kind') continue;
    if (obj[key] !== undefined) check(obj[key], sub, key, causes);
  }
  for (const key of schema.required ?? []) {
    if (obj[key] === undefined) causes.push(required(key));
  }
  return causes;
}

function required(path: string): StatusCause {
  return { reason: 'FieldValueRequired', message: 'Required value', field: path };
}

function typeName(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'array';
  if (typeof value === 'number') return Number.isInteger(value) ? 'integer' : 'number';
  return typeof value;
}

function shown(value: unknown): string {
  return typeof value === 'string' ? JSON.stringify(value) : isObject(value) || Array.isArray(value) ? `"${typeName(value)}"` : String(value);
}

function invalid(path: string, value: unknown, detail: string): StatusCause {
  return { reason: 'FieldValueInvalid', message: `Invalid value: ${shown(value)}: ${detail}`, field: path };
}

function check(value: unknown, schema: JsonSchema, path: string, causes: StatusCause[]): void {
  if (value === null) {
    if (!schema.nullable) causes.push(invalid(path, 'null', `${path} in body must be of type ${schema.type ?? 'object'}: "null"`));
    return;
  }
  if (schema['x-kubernetes-int-or-string']) {
    if (typeof value !== 'string' && !(typeof value === 'number' && Number.isInteger(value))) {
      causes.push(invalid(path, typeName(value), `${path} in body must be of type int-or-string: "${typeName(value)}"`));
    }
    return;
  }
  const type = schema.type;
  if (type && !hasType(value, type)) {
    causes.push(invalid(path, typeName(value), `${path} in body must be of type ${type}: "${typeName(value)}"`));
    return;
  }
  if (schema.enum && !schema.enum.some((e) => JSON.stringify(e) === JSON.stringify(value))) {
    causes.push({ reason: 'FieldValueNotSupported', message: `Unsupported value: ${shown(value)}: supported values: ${schema.enum.map((e) => JSON.stringify(e)).join(', ')}`, field: path });
  }
  if (typeof value === 'number') {
    if (schema.minimum !== undefined && value < schema.minimum) causes.push(invalid(path, value, `${path} in body should be greater than or equal to ${schema.minimum}`));
    if (schema.maximum !== undefined && value > schema.maximum) causes.push(invalid(path, value, `${path} in body should be less than or equal to ${schema.maximum}`));
  }
  if (typeof value === 'string') {
    if (schema.maxLength !== undefined && value.length > schema.maxLength) causes.push({ reason: 'FieldValueTooLong', message: `Too long: may not be more than ${schema.maxLength} bytes`, field: path });
    if (schema.minLength !== undefined && value.length < schema.minLength) causes.push(invalid(path, value, `${path} in body should be at least ${schema.minLength} chars long`));
    if (schema.pattern !== undefined && !safeRegExp(schema.pattern)?.test(value)) causes.push(invalid(path, value, `${path} in body should match '${schema.pattern}'`));
  }
  if (Array.isArray(value)) {
    if (schema.maxItems !== undefined && value.length > schema.maxItems) causes.push({ reason: 'FieldValueTooMany', message: `Too many: ${value.length}: must have at most ${schema.maxItems} items`, field: path });
    if (schema.minItems !== undefined && value.length < schema.minItems) causes.push(invalid(path, value, `${path} in body should have at least ${schema.minItems} items`));
    if (schema.items) value.forEach((item, i) => check(item, schema.items as JsonSchema, `${path}[${i}]`, causes));
  }
  if (isObject(value)) {
    for (const [key, sub] of Object.entries(schema.properties ?? {})) {
      if (value[key] !== undefined) check(value[key], sub, `${path}.${key}`, causes);
    }
    if (isObject(schema.additionalProperties)) {
      for (const key of Object.keys(value)) if (!schema.properties?.[key]) check(value[key], schema.additionalProperties as JsonSchema, `${path}.${key}`, causes);
    }
    for (const key of schema.required ?? []) if (value[key] === undefined) causes.push(required(`${path}.${key}`));
  }
}

function hasType(value: unknown, type: string): boolean {
  switch (type) {
    case 'object':
      return isObject(value);
    case 'array':
      return Array.isArray(value);
    case 'string':
      return typeof value === 'string';
    case 'integer':
      return typeof value === 'number' && Number.isInteger(value);
    case 'number':
      return typeof value === 'number';
    case 'boolean':
      return typeof value === 'boolean';
    default:
      return true;
  }
}

function safeRegExp(pattern: string): RegExp | undefined {
  try {
    return new RegExp(pattern, 'u');
  } catch {
    return undefined;
  }
}
