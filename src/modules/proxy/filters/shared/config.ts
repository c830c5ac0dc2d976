/**
 * Reading a filter's typed_config as `decodeMessage` returns it (snake_case, int64 as strings,
 * wrappers as `{ value }`, Duration as `{ seconds, nanos }`). Every failure names the field, so
 * the proxy's NACK says exactly what it could not honour.
 */

export type ConfigObject = Record<string, unknown>;

/** Config the filter cannot honour; the message starts with the field's path. */
export class FilterConfigError extends Error {
  constructor(field: string, problem: string) {
    super(`${field}: ${problem}`);
    this.name = 'FilterConfigError';
  }
}

export function fail(field: string, problem: string): never {
  throw new FilterConfigError(field, problem);
}

export function isObject(value: unknown): value is ConfigObject {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

export function has(object: ConfigObject, key: string): boolean {
  return object[key] !== undefined && object[key] !== null;
}

export function asObject(value: unknown, field: string): ConfigObject {
  if (!isObject(value)) fail(field, `expected a message, got ${describe(value)}`);
  return value;
}

export function optionalObject(value: unknown, field: string): ConfigObject | undefined {
  return value === undefined || value === null ? undefined : asObject(value, field);
}

export function asList(value: unknown, field: string): unknown[] {
  if (value === undefined || value === null) return [];
  if (!Array.isArray(value)) fail(field, `expected a list, got ${describe(value)}`);
  return value;
}

export function asString(value: unknown, field: string): string {
  if (value === undefined || value === null) return '';
  if (typeof value !== 'string') fail(field, `expected a string, got ${describe(value)}`);
  return value;
}

export function requiredString(value: unknown, field: string): string {
  const text = asString(value, field);
  if (text === '') fail(field, 'must not be empty');
  return text;
}

export function asBool(value: unknown, field: string): boolean {
  if (value === undefined || value === null) return false;
  if (typeof value !== 'boolean') fail(field, `expected a boolean, got ${describe(value)}`);
  return value;
}

/** A number, or an int64 the decoder rendered as a string. */
export function asNumber(value: unknown, field: string, fallback = 0): number {
  if (value === undefined || value === null) return fallback;
  const n = typeof value === 'string' && value.trim() !== '' ? Number(value) : value;
  if (typeof n !== 'number' || Number.isNaN(n)) fail(field, `expected a number, got ${describe(value)}`);
  return n;
}

/** google.protobuf.UInt32Value and friends: `{ value }`; undefined when unset. */
export function wrappedNumber(value: unknown, field: string): number | undefined {
  if (value === undefined || value === null) return undefined;
  if (typeof value === 'number') return value;
  return asNumber(asObject(value, field).value, `${field}.value`);
}

/** google.protobuf.Duration in milliseconds; undefined when unset. */
export function durationMs(value: unknown, field: string): number | undefined {
  if (value === undefined || value === null) return undefined;
  const d = asObject(value, field);
  const ms = asNumber(d.seconds, `${field}.seconds`) * 1000 + asNumber(d.nanos, `${field}.nanos`) / 1e6;
  if (ms < 0) fail(field, 'must not be negative');
  return ms;
}

/**
 * The member of a oneof that is set. Fields the proxy does not implement are listed in
 * `unsupported` so the error names them rather than saying "nothing set".
 */
export function oneofMember(object: ConfigObject, members: readonly string[], field: string, unsupported: readonly string[] = []): string {
  for (const key of unsupported) {
    if (has(object, key)) fail(`${field}.${key}`, 'is not supported by the built-in proxy');
  }
  const set = members.filter((key) => has(object, key));
  if (set.length === 0) fail(field, `none of ${members.join(', ')} is set`);
  if (set.length > 1) fail(field, `only one of ${set.join(', ')} may be set`);
  return set[0];
}

function describe(value: unknown): string {
  if (Array.isArray(value)) return 'a list';
  if (value === null) return 'null';
  return typeof value === 'object' ? 'a message' : `${typeof value} ${JSON.stringify(value)}`;
}
