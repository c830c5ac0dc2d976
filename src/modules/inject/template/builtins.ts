import { FuncError, GoFunc } from './exec';
import { sprint, sprintf, sprintln } from './format';
import { compareStrings, GoEnum, GoInt, GoMap, GoNil, GoStringer, GoStruct, T, typeName, isTrue, zeroOf } from './values';

/** Go's predefined template functions (text/template's builtins), with its comparison rules. */

type Kind = 'bool' | 'int' | 'float' | 'string' | 'invalid' | 'other';

function basicKind(v: unknown): Kind {
  if (v === undefined || v === null) return 'invalid';
  if (typeof v === 'boolean') return 'bool';
  if (typeof v === 'string') return 'string';
  if (typeof v === 'number') return 'float';
  if (v instanceof GoInt || v instanceof GoEnum) return 'int';
  return 'other';
}

function intValue(v: unknown): number {
  return v instanceof GoInt || v instanceof GoEnum ? v.value : NaN;
}

function eq(arg1: unknown, ...rest: unknown[]): boolean {
  if (rest.length === 0) throw new FuncError('missing argument for comparison');
  const k1 = basicKind(arg1);
  for (const arg of rest) {
    const k2 = basicKind(arg);
    let truth = false;
    if (k1 !== k2) {
      if (k1 !== 'invalid' && k2 !== 'invalid') throw new FuncError('incompatible types for comparison');
    } else {
      switch (k1) {
        case 'bool':
        case 'string':
        case 'float':
          truth = arg1 === arg;
          break;
        case 'int':
          truth = intValue(arg1) === intValue(arg);
          break;
        case 'invalid':
          truth = true;
          break;
        default:
          truth = sameValue(arg1, arg);
      }
    }
    if (truth) return true;
  }
  return false;
}

/** Equality of non-basic values: nil-ness for pointers, maps and slices; identity otherwise. */
function sameValue(a: unknown, b: unknown): boolean {
  const isNil = (v: unknown) => v instanceof GoNil || (v instanceof GoMap && v.nil);
  if (Array.isArray(a) || Array.isArray(b) || a instanceof GoMap || b instanceof GoMap) {
    if (isNil(a) || isNil(b)) return isNil(a) === isNil(b);
    throw new FuncError(`non-comparable type ${typeName(a)}`);
  }
  if (isNil(a) || isNil(b)) return isNil(a) === isNil(b);
  if (a instanceof GoStruct && b instanceof GoStruct) return JSON.stringify(a.data) === JSON.stringify(b.data) && a.type === b.type;
  if (a instanceof GoStringer && b instanceof GoStringer) return a.toString() === b.toString();
  return a === b;
}

function lt(a: unknown, b: unknown): boolean {
  const k1 = basicKind(a);
  const k2 = basicKind(b);
  if (k1 === 'invalid' || k1 === 'other' || k2 === 'invalid' || k2 === 'other') throw new FuncError('invalid type for comparison');
  if (k1 !== k2) throw new FuncError('incompatible types for comparison');
  switch (k1) {
    case 'bool':
      throw new FuncError('invalid type for comparison');
    case 'string':
      return compareStrings(a as string, b as string) < 0;
    case 'float':
      return (a as number) < (b as number);
    default:
      return intValue(a) < intValue(b);
  }
}

function length(item: unknown): GoInt {
  if (item === undefined || item === null) throw new FuncError('len of untyped nil');
  if (typeof item === 'string') return new GoInt(Buffer.byteLength(item));
  if (Array.isArray(item)) return new GoInt(item.length);
  if (item instanceof GoMap) return new GoInt(item.entries.size);
  if (item instanceof GoNil) {
    if (item.type.kind === 'ptr') throw new FuncError('len of nil pointer');
    return new GoInt(0);
  }
  throw new FuncError(`len of type ${typeName(item)}`);
}

function indexOf(v: unknown, len: number, what: string): number {
  if (!(v instanceof GoInt)) {
    if (v === undefined || v === null) throw new FuncError(`cannot index ${what} with nil`);
    throw new FuncError(`cannot index ${what} with type ${typeName(v)}`);
  }
  if (v.value < 0 || v.value >= len) throw new FuncError(`index out of range: ${v.value}`);
  return v.value;
}

function index(item: unknown, ...indexes: unknown[]): unknown {
  if (item === undefined || item === null) throw new FuncError('index of untyped nil');
  for (const ix of indexes) {
    if (item === null || item === undefined) throw new FuncError('index of untyped nil');
    if (item instanceof GoNil) {
      if (item.type.kind === 'ptr') throw new FuncError('index of nil pointer');
      item = [];
    }
    if (Array.isArray(item)) item = item[indexOf(ix, item.length, 'slice/array')];
    else if (typeof item === 'string') item = new GoInt(Buffer.from(item)[indexOf(ix, Buffer.byteLength(item), 'string')], T.int32);
    else if (item instanceof GoMap) {
      if (ix === undefined || ix === null) throw new FuncError(`value is nil; should be of type string`);
      if (typeof ix !== 'string') throw new FuncError(`value has type ${typeName(ix)}; should be string`);
      item = item.entries.has(ix) ? item.entries.get(ix) : zeroOf(item.elem);
    } else throw new FuncError(`can't index item of type ${typeName(item)}`);
  }
  return item;
}

function slice(item: unknown, ...indexes: unknown[]): unknown {
  if (item === undefined || item === null) throw new FuncError('slice of untyped nil');
  if (indexes.length > 3) throw new FuncError(`too many slice indexes: ${indexes.length}`);
  const isString = typeof item === 'string';
  const seq: unknown[] | Buffer = isString ? Buffer.from(item as string) : Array.isArray(item) ? item : item instanceof GoNil ? [] : (undefined as never);
  if (seq === undefined) throw new FuncError(`can't slice item of type ${typeName(item)}`);
  if (isString && indexes.length === 3) throw new FuncError('cannot 3-index slice a string');
  const bounds = [0, seq.length];
  indexes.slice(0, 2).forEach((ix, i) => {
    if (!(ix instanceof GoInt)) throw new FuncError(`cannot index slice/array with type ${typeName(ix)}`);
    if (ix.value < 0 || ix.value > seq.length) throw new FuncError(`index out of range: ${ix.value}`);
    bounds[i] = ix.value;
  });
  if (bounds[0] > bounds[1]) throw new FuncError(`invalid slice index: ${bounds[0]} > ${bounds[1]}`);
  return isString ? (seq as Buffer).subarray(bounds[0], bounds[1]).toString() : (seq as unknown[]).slice(bounds[0], bounds[1]);
}

/** The text of html/js/urlquery's arguments: one string as is, else fmt.Sprint. */
function evalArgs(args: unknown[]): string {
  if (args.length === 1 && typeof args[0] === 'string') return args[0];
  return sprint(args.map((a) => (a === undefined ? null : a)));
}

function htmlEscape(s: string): string {
  return s.replace(/[\0"'&<>]/g, (c) => ({ '\0': '\uFFFD', '"': '&#34;', "'": '&#39;', '&': '&amp;', '<': '&lt;', '>': '&gt;' })[c]!);
}

function jsEscape(s: string): string {
  let out = '';
  for (const ch of s) {
    const code = ch.codePointAt(0)!;
    switch (ch) {
      case '\\':
        out += '\\\\';
        break;
      case "'":
        out += "\\'";
        break;
      case '"':
        out += '\\"';
        break;
      case '<':
        out += '\\u003C';
        break;
      case '>':
        out += '\\u003E';
        break;
      case '&':
        out += '\\u0026';
        break;
      case '=':
        out += '\\u003D';
        break;
      default:
        out += code < 0x20 ? `\\u${code.toString(16).toUpperCase().padStart(4, '0')}` : ch;
    }
  }
  return out;
}

/** Go's url.QueryEscape. */
export function queryEscape(s: string): string {
  return [...Buffer.from(s)]
    .map((b) => {
      const c = String.fromCharCode(b);
      if (/[A-Za-z0-9\-_.~]/.test(c)) return c;
      if (c === ' ') return '+';
      return '%' + b.toString(16).toUpperCase().padStart(2, '0');
    })
    .join('');
}

const v = (fn: GoFunc['fn'], params: GoFunc['params'], variadic?: GoFunc['variadic']): GoFunc => ({ fn, params, variadic });

export const BUILTINS: ReadonlyMap<string, GoFunc> = new Map<string, GoFunc>([
  ['and', v(() => undefined, ['value'], 'value')],
  ['or', v(() => undefined, ['value'], 'value')],
  ['not', v((a) => !isTrue(a), ['value'])],
  ['len', v(length, ['value'])],
  ['index', v(index, ['value'], 'value')],
  ['slice', v(slice, ['value'], 'value')],
  ['print', v((...a) => sprint(a), [], 'any')],
  ['printf', v((f, ...a) => sprintf(f as string, a), ['string'], 'any')],
  ['println', v((...a) => sprintln(a), [], 'any')],
  ['html', v((...a) => htmlEscape(evalArgs(a)), [], 'any')],
  ['js', v((...a) => jsEscape(evalArgs(a)), [], 'any')],
  ['urlquery', v((...a) => queryEscape(evalArgs(a)), [], 'any')],
  ['eq', v(eq, ['value'], 'value')],
  ['ne', v((a, b) => !eq(a, b), ['value', 'value'])],
  ['lt', v((a, b) => lt(a, b), ['value', 'value'])],
  ['le', v((a, b) => lt(a, b) || eq(a, b), ['value', 'value'])],
  ['gt', v((a, b) => !lt(a, b) && !eq(a, b), ['value', 'value'])],
  ['ge', v((a, b) => !lt(a, b), ['value', 'value'])],
  [
    'call',
    v(
      (fn, ...args) => {
        if (typeof fn !== 'function') throw new FuncError(`non-function of type ${typeName(fn)}`);
        return (fn as (...a: unknown[]) => unknown)(...args);
      },
      ['value'],
      'value',
    ),
  ],
]);
