/**
 * Go values as the template engine sees them. Go templates act on typed data (structs with
 * Go field names, typed maps, ints versus float64s, typed nils), and the incumbent's templates
 * depend on those types: a missing struct field is its zero value while a missing map key is
 * "no value", `default` treats 0 as empty, `eq` refuses to compare a string with an int.
 *
 * In JavaScript:
 * - `undefined` is Go's invalid reflect.Value ("<no value>": a missing map key);
 * - `null` is a nil interface{} (inside maps and slices; a pipeline's nil result becomes `undefined`);
 * - string, boolean and number (float64) are themselves; GoInt carries an integer with its Go type;
 * - GoMap is a map (typed by its element), arrays are slices, GoNil a typed nil pointer or slice;
 * - GoStruct is a struct (or a pointer to one) over JSON data, described by a StructType;
 * - GoEnum is a proto enum (prints its name), and any value may carry Go methods (GoMethods).
 */

export type GoKind =
  | 'bool'
  | 'int'
  | 'int32'
  | 'int64'
  | 'uint32'
  | 'float64'
  | 'string'
  | 'interface'
  | 'map'
  | 'slice'
  | 'ptr'
  | 'struct'
  | 'enum'
  | 'stringer';

/** A Go type, as much of it as the engine needs: zero values, names in errors, conversions. */
export interface GoType {
  readonly kind: GoKind;
  /** How Go spells it (`string`, `map[string]string`, `v1.ObjectMeta`). */
  readonly name: string;
  readonly elem?: GoType;
  /** For structs (and pointers to them): the fields. */
  readonly struct?: StructType;
  /** For enums: value names by number. */
  readonly enumNames?: readonly string[];
  /** For `stringer` types (quantities, int-or-string): how the JSON value prints. */
  readonly show?: (raw: unknown) => string;
}

export interface FieldDef {
  /** The Go field name. */
  readonly go: string;
  /** The JSON key. */
  readonly json: string;
  readonly type: GoType;
  readonly omitEmpty?: boolean;
}

/** A struct type; `open` structs also answer unknown Go field names from their JSON keys. */
export interface StructType {
  readonly name: string;
  readonly fields: readonly FieldDef[];
  readonly open?: boolean;
  /** Methods callable from templates (`.ProxyConfig.GetTracing`), receiver first. */
  readonly methods?: Readonly<Record<string, (self: GoStruct | GoNil, ...args: unknown[]) => unknown>>;
}

const basic = (kind: GoKind, name: string = kind): GoType => Object.freeze({ kind, name });

export const T = {
  bool: basic('bool'),
  int: basic('int'),
  int32: basic('int32'),
  int64: basic('int64'),
  uint32: basic('uint32'),
  float64: basic('float64'),
  string: basic('string'),
  any: basic('interface', 'interface {}'),
  slice: (elem: GoType): GoType => Object.freeze({ kind: 'slice', name: `[]${elem.name}`, elem }),
  map: (elem: GoType): GoType => Object.freeze({ kind: 'map', name: `map[string]${elem.name}`, elem }),
  ptr: (elem: GoType): GoType => Object.freeze({ kind: 'ptr', name: `*${elem.name}`, elem, struct: elem.struct }),
  struct: (struct: StructType): GoType => Object.freeze({ kind: 'struct', name: struct.name, struct }),
  enum: (name: string, names: readonly string[]): GoType => Object.freeze({ kind: 'enum', name, enumNames: names }),
  stringer: (name: string, show: (raw: unknown) => string): GoType => Object.freeze({ kind: 'stringer', name, show }),
};

export const MAP_ANY = T.map(T.any);
export const SLICE_ANY = T.slice(T.any);

/** An integer with its Go type (int, int32, int64...). */
export class GoInt {
  constructor(
    readonly value: number,
    readonly type: GoType = T.int,
  ) {}
  toString(): string {
    return String(this.value);
  }
}

/** A Go map with string keys; `nil` maps read as empty and their missing keys as the element's zero. */
export class GoMap {
  constructor(
    readonly entries: Map<string, unknown>,
    readonly type: GoType = MAP_ANY,
    readonly nil = false,
  ) {}
  static of(record: Record<string, unknown>, type: GoType = MAP_ANY): GoMap {
    return new GoMap(new Map(Object.entries(record)), type);
  }
  get elem(): GoType {
    return this.type.elem ?? T.any;
  }
  sortedKeys(): string[] {
    return [...this.entries.keys()].sort(compareStrings);
  }
}

/** A typed nil: a nil pointer (`<nil>`) or nil slice (`[]`). */
export class GoNil {
  constructor(readonly type: GoType) {}
}

/** A struct value (or a non-nil pointer to one) reading its fields from JSON data. */
export class GoStruct {
  constructor(
    readonly type: GoType,
    readonly data: Readonly<Record<string, unknown>>,
  ) {}
  get struct(): StructType {
    return this.type.struct!;
  }
}

/** A proto enum value: an int32 that prints its name. */
export class GoEnum {
  constructor(
    readonly value: number,
    readonly type: GoType,
  ) {}
  get name(): string {
    return this.type.enumNames?.[this.value] ?? String(this.value);
  }
}

/** A value of a type with a String method over its JSON form (quantities, int-or-string). */
export class GoStringer {
  constructor(
    readonly raw: unknown,
    readonly type: GoType,
  ) {}
  toString(): string {
    return this.type.show!(this.raw);
  }
}

/** Go's byte-wise string order (JavaScript's default sort compares UTF-16 units). */
export function compareStrings(a: string, b: string): number {
  if (a === b) return 0;
  const ba = Buffer.from(a);
  const bb = Buffer.from(b);
  return Buffer.compare(ba, bb);
}

/** The zero value of a Go type. */
export function zeroOf(type: GoType): unknown {
  switch (type.kind) {
    case 'bool':
      return false;
    case 'int':
    case 'int32':
    case 'int64':
    case 'uint32':
      return new GoInt(0, type);
    case 'float64':
      return 0;
    case 'string':
      return '';
    case 'interface':
      return null;
    case 'map':
      return new GoMap(new Map(), type, true);
    case 'slice':
    case 'ptr':
      return new GoNil(type);
    case 'struct':
      return new GoStruct(type, {});
    case 'enum':
      return new GoEnum(0, type);
    case 'stringer':
      return new GoStringer(undefined, type);
  }
}

/** A Go value of `type` from JSON data (absent or null data: the zero value). */
export function fromJSON(raw: unknown, type: GoType): unknown {
  if (raw === undefined || raw === null) return zeroOf(type);
  switch (type.kind) {
    case 'interface':
      return dynamicFromJSON(raw);
    case 'bool':
      return typeof raw === 'boolean' ? raw : zeroOf(type);
    case 'int':
    case 'int32':
    case 'int64':
    case 'uint32':
      return typeof raw === 'number' ? new GoInt(Math.trunc(raw), type) : zeroOf(type);
    case 'float64':
      return typeof raw === 'number' ? raw : zeroOf(type);
    case 'string':
      return typeof raw === 'string' ? raw : String(raw);
    case 'map': {
      if (!isRecord(raw)) return zeroOf(type);
      const elem = type.elem ?? T.any;
      return new GoMap(new Map(Object.entries(raw).map(([k, v]) => [k, fromJSON(v, elem)])), type);
    }
    case 'slice':
      return Array.isArray(raw) ? raw.map((v) => fromJSON(v, type.elem ?? T.any)) : zeroOf(type);
    case 'ptr':
      return fromJSON(raw, type.elem!);
    case 'struct':
      return isRecord(raw) ? new GoStruct(type, raw) : zeroOf(type);
    case 'enum': {
      if (typeof raw === 'number') return new GoEnum(raw, type);
      const index = type.enumNames?.indexOf(String(raw)) ?? -1;
      return new GoEnum(index < 0 ? 0 : index, type);
    }
    case 'stringer':
      return new GoStringer(raw, type);
  }
}

/** JSON data as interface{}: maps of interface{}, []interface{}, float64, string, bool, nil. */
export function dynamicFromJSON(raw: unknown): unknown {
  if (raw === undefined || raw === null) return null;
  if (Array.isArray(raw)) return raw.map(dynamicFromJSON);
  if (isRecord(raw)) return new GoMap(new Map(Object.entries(raw).map(([k, v]) => [k, dynamicFromJSON(v)])), MAP_ANY);
  if (typeof raw === 'number' || typeof raw === 'string' || typeof raw === 'boolean') return raw;
  if (typeof raw === 'bigint') return Number(raw);
  return raw;
}

export function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v) && Object.getPrototypeOf(v) === Object.prototype;
}

export function isInt(v: unknown): v is GoInt {
  return v instanceof GoInt;
}

/** Go's name of a value's dynamic type, as `%T` and error messages print it. */
export function typeName(v: unknown): string {
  if (v === undefined) return '<invalid reflect.Value>';
  if (v === null) return '<nil>';
  if (typeof v === 'string') return 'string';
  if (typeof v === 'boolean') return 'bool';
  if (typeof v === 'number') return 'float64';
  if (v instanceof GoInt) return v.type.name;
  if (v instanceof GoMap) return v.type.name;
  if (v instanceof GoNil) return v.type.name;
  if (v instanceof GoStruct) return v.type.name;
  if (v instanceof GoEnum) return v.type.name;
  if (v instanceof GoStringer) return v.type.name;
  if (Array.isArray(v)) return '[]interface {}';
  if (typeof v === 'function') return 'func';
  return typeof v;
}

/** Go's truth: false, 0, "", nil and empty collections are false; structs are true. */
export function isTrue(v: unknown): boolean {
  if (v === undefined || v === null) return false;
  if (typeof v === 'boolean') return v;
  if (typeof v === 'string') return v.length > 0;
  if (typeof v === 'number') return v !== 0;
  if (v instanceof GoInt) return v.value !== 0;
  if (v instanceof GoEnum) return v.value !== 0;
  if (v instanceof GoMap) return v.entries.size > 0;
  if (Array.isArray(v)) return v.length > 0;
  if (v instanceof GoNil) return false;
  return true;
}

/**
 * The value back as plain JSON data (what encoding/json would marshal), for toJSON, toYaml and
 * friends. Struct fields follow their JSON tags (omitempty drops empty ones).
 */
export function toPlain(v: unknown): unknown {
  if (v === undefined || v === null) return null;
  if (typeof v === 'string' || typeof v === 'boolean' || typeof v === 'number') return v;
  if (v instanceof GoInt) return v.value;
  if (v instanceof GoEnum) return v.name;
  if (v instanceof GoStringer) return v.raw ?? null;
  if (v instanceof GoNil) return null;
  if (v instanceof GoMap) {
    if (v.nil) return null;
    const out: Record<string, unknown> = {};
    for (const key of v.sortedKeys()) out[key] = toPlain(v.entries.get(key));
    return out;
  }
  if (Array.isArray(v)) return v.map(toPlain);
  if (v instanceof GoStruct) return structToPlain(v);
  return null;
}

function structToPlain(s: GoStruct): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  const known = new Set<string>();
  for (const field of s.struct.fields) {
    known.add(field.json);
    const raw = s.data[field.json];
    if (field.omitEmpty && isEmptyJSON(raw, field.type)) continue;
    out[field.json] = toPlain(fromJSON(raw, field.type));
  }
  if (s.struct.open) for (const [k, raw] of Object.entries(s.data)) if (!known.has(k) && raw !== undefined) out[k] = raw;
  return out;
}

/** encoding/json's omitempty: false, 0, "", nil pointers, empty maps and slices (structs never). */
function isEmptyJSON(raw: unknown, type: GoType): boolean {
  if (raw === undefined || raw === null) return type.kind !== 'struct';
  switch (type.kind) {
    case 'ptr':
      return false;
    case 'bool':
      return raw === false;
    case 'int':
    case 'int32':
    case 'int64':
    case 'uint32':
    case 'float64':
    case 'enum':
      return raw === 0;
    case 'string':
      return raw === '';
    case 'map':
      return isRecord(raw) && Object.keys(raw).length === 0;
    case 'slice':
      return Array.isArray(raw) && raw.length === 0;
    default:
      return false;
  }
}
