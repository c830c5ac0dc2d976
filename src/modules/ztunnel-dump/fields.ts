import { UserError } from '../shared/user-error';

/** A JSON object of the dump, as parsed. */
export type JsonObject = Record<string, unknown>;

/** What a JSON value is, in words, for error messages. */
function describe(value: unknown): string {
  if (Array.isArray(value)) return 'a list';
  if (value === null) return 'null';
  switch (typeof value) {
    case 'string':
      return `a string (${JSON.stringify(value.length > 40 ? value.slice(0, 40) + '…' : value)})`;
    case 'number':
      return `a number (${value})`;
    case 'boolean':
      return `a boolean (${value})`;
    default:
      return 'an object';
  }
}

/** `a.b`, `a["/10.0.0.1"]` or `a[3]`: where a value sits in the dump, as users read it. */
export function fieldPath(parent: string, key: string | number): string {
  if (typeof key === 'number') return `${parent}[${key}]`;
  const member = /^[A-Za-z_][A-Za-z0-9_]*$/.test(key) ? `.${key}` : `[${JSON.stringify(key)}]`;
  return parent ? `${parent}${member}` : member.replace(/^\./, '');
}

/**
 * Typed reads of the loosely typed dump JSON. A missing or null field reads as empty (as the
 * reference's Go decoder does); a field of the wrong type is a one-line error naming the
 * source (file or pod) and the field.
 */
export class DumpFields {
  constructor(readonly source: string) {}

  fail(path: string, value: unknown, expected: string): never {
    throw new UserError(`${this.source}: ${path} is ${describe(value)}, expected ${expected}`);
  }

  /** An object, or undefined when absent or null. */
  optObject(value: unknown, path: string): JsonObject | undefined {
    if (value === undefined || value === null) return undefined;
    if (typeof value !== 'object' || Array.isArray(value)) this.fail(path, value, 'an object');
    return value as JsonObject;
  }

  object(value: unknown, path: string): JsonObject {
    return this.optObject(value, path) ?? {};
  }

  string(parent: JsonObject, key: string, path: string): string {
    const value = parent[key];
    if (value === undefined || value === null) return '';
    if (typeof value !== 'string') this.fail(fieldPath(path, key), value, 'a string');
    return value;
  }

  list(value: unknown, path: string): unknown[] {
    if (value === undefined || value === null) return [];
    if (!Array.isArray(value)) this.fail(path, value, 'a list');
    return value;
  }

  stringList(parent: JsonObject, key: string, path: string): string[] {
    const at = fieldPath(path, key);
    return this.list(parent[key], at).map((item, i) => {
      if (typeof item !== 'string') this.fail(fieldPath(at, i), item, 'a string');
      return item;
    });
  }

  /**
   * The entries of a collection the dump writes either as a list or as an object keyed by
   * address or UID (ztunnel changed between the two); each with the path it sits at.
   */
  collection(value: unknown, path: string): { path: string; value: unknown }[] {
    if (value === undefined || value === null) return [];
    if (Array.isArray(value)) return value.map((v, i) => ({ path: fieldPath(path, i), value: v }));
    if (typeof value !== 'object') this.fail(path, value, 'an object or a list');
    return Object.entries(value as JsonObject).map(([k, v]) => ({ path: fieldPath(path, k), value: v }));
  }

  /** An object entry of a collection; null entries are an error, since they describe nothing. */
  entry(value: unknown, path: string): JsonObject {
    if (value === null || typeof value !== 'object' || Array.isArray(value)) this.fail(path, value, 'an object');
    return value as JsonObject;
  }
}
