import { GoEnum, GoInt, GoMap, GoNil, GoStringer, GoStruct, typeName } from './values';

/**
 * Go's fmt for template values: `%v` (what an action prints), Sprint/Sprintln spacing and a
 * printf with the verbs templates use (%v %+v %s %q %d %t %f %e %g %x %X %o %b %c %T %%, width,
 * precision and the - + 0 space # flags).
 */

/** Go's %v of a float64: strconv 'g' with the shortest digits, %e when the exponent is < -4 or >= 6. */
export function formatFloat(f: number): string {
  if (Number.isNaN(f)) return 'NaN';
  if (f === Infinity) return '+Inf';
  if (f === -Infinity) return '-Inf';
  if (f === 0) return Object.is(f, -0) ? '-0' : '0';
  const [mantissa, expText] = f.toExponential().split('e');
  const exp = Number(expText);
  if (exp < -4 || exp >= 6) return `${mantissa}e${exp < 0 ? '-' : '+'}${String(Math.abs(exp)).padStart(2, '0')}`;
  // Plain decimal with the shortest digits.
  const digits = mantissa.replace('-', '').replace('.', '');
  const neg = f < 0 ? '-' : '';
  const point = exp + 1;
  if (point <= 0) return `${neg}0.${'0'.repeat(-point)}${digits}`;
  if (point >= digits.length) return neg + digits + '0'.repeat(point - digits.length);
  return `${neg}${digits.slice(0, point)}.${digits.slice(point)}`;
}

/** `%v` of a value at depth 0 (a pointer's target prints as itself). */
export function formatValue(v: unknown, plus = false): string {
  if (v === undefined) return '<no value>';
  return formatInner(v, plus, 0);
}

function formatInner(v: unknown, plus: boolean, depth: number): string {
  if (v === undefined || v === null) return '<nil>';
  if (typeof v === 'string') return v;
  if (typeof v === 'boolean') return v ? 'true' : 'false';
  if (typeof v === 'number') return formatFloat(v);
  if (v instanceof GoInt) return String(v.value);
  if (v instanceof GoEnum) return v.name;
  if (v instanceof GoStringer) return v.toString();
  if (v instanceof GoNil) return v.type.kind === 'slice' ? '[]' : '<nil>';
  if (Array.isArray(v)) return `[${v.map((e) => formatInner(e, plus, depth + 1)).join(' ')}]`;
  if (v instanceof GoMap) return `map[${v.sortedKeys().map((k) => `${k}:${formatInner(v.entries.get(k), plus, depth + 1)}`).join(' ')}]`;
  if (v instanceof GoStruct) {
    const parts = v.struct.fields.map((f) => {
      const value = fieldValue(v, f.go);
      const text = formatInner(value, plus, depth + 1);
      return plus ? `${f.go}:${text}` : text;
    });
    const body = `{${parts.join(' ')}}`;
    return depth > 0 && v.type.kind === 'ptr' ? `&${body}` : body;
  }
  if (typeof v === 'function') return '<func>';
  return String(v);
}

// Set by the executor's module: reading a struct field needs the field machinery.
let fieldValue: (s: GoStruct, name: string) => unknown = () => undefined;
export function setFieldReader(reader: (s: GoStruct, name: string) => unknown): void {
  fieldValue = reader;
}

/** fmt.Sprint: spaces between operands when neither side is a string. */
export function sprint(args: unknown[]): string {
  let out = '';
  args.forEach((arg, i) => {
    if (i > 0 && typeof arg !== 'string' && typeof args[i - 1] !== 'string') out += ' ';
    out += formatInner(arg, false, 0);
  });
  return out;
}

/** fmt.Sprintln: spaces between all operands, a newline at the end. */
export function sprintln(args: unknown[]): string {
  return args.map((a) => formatInner(a, false, 0)).join(' ') + '\n';
}

/** Go's %q: a double-quoted Go string literal. */
export function quoteGo(s: string): string {
  let out = '"';
  for (const ch of s) {
    const code = ch.codePointAt(0)!;
    switch (ch) {
      case '"':
        out += '\\"';
        break;
      case '\\':
        out += '\\\\';
        break;
      case '\n':
        out += '\\n';
        break;
      case '\r':
        out += '\\r';
        break;
      case '\t':
        out += '\\t';
        break;
      case '\x07':
        out += '\\a';
        break;
      case '\b':
        out += '\\b';
        break;
      case '\f':
        out += '\\f';
        break;
      case '\v':
        out += '\\v';
        break;
      default:
        if (code < 0x20 || code === 0x7f) out += `\\x${code.toString(16).padStart(2, '0')}`;
        else if (code === 0xfffd && ch !== '\ufffd') out += '\\ufffd';
        else out += ch;
    }
  }
  return out + '"';
}

interface Spec {
  minus: boolean;
  plus: boolean;
  zero: boolean;
  space: boolean;
  sharp: boolean;
  width?: number;
  precision?: number;
}

/** fmt.Sprintf over template values. */
export function sprintf(format: string, args: unknown[]): string {
  let out = '';
  let argIndex = 0;
  let i = 0;
  while (i < format.length) {
    const ch = format[i];
    if (ch !== '%') {
      out += ch;
      i++;
      continue;
    }
    i++;
    const spec: Spec = { minus: false, plus: false, zero: false, space: false, sharp: false };
    for (; i < format.length; i++) {
      const f = format[i];
      if (f === '-') spec.minus = true;
      else if (f === '+') spec.plus = true;
      else if (f === '0') spec.zero = true;
      else if (f === ' ') spec.space = true;
      else if (f === '#') spec.sharp = true;
      else break;
    }
    const readNumber = (): number | undefined => {
      if (format[i] === '*') {
        i++;
        const a = args[argIndex++];
        return a instanceof GoInt ? a.value : undefined;
      }
      const start = i;
      while (i < format.length && format[i] >= '0' && format[i] <= '9') i++;
      return i > start ? Number(format.slice(start, i)) : undefined;
    };
    spec.width = readNumber();
    if (format[i] === '.') {
      i++;
      spec.precision = readNumber() ?? 0;
    }
    const verb = format[i++];
    if (verb === undefined) {
      out += '%!(NOVERB)';
      break;
    }
    if (verb === '%') {
      out += '%';
      continue;
    }
    if (argIndex >= args.length) {
      out += `%!${verb}(MISSING)`;
      continue;
    }
    out += pad(formatVerb(verb, args[argIndex++], spec), spec);
  }
  if (argIndex < args.length) {
    out += `%!(EXTRA ${args
      .slice(argIndex)
      .map((a) => `${typeName(a)}=${formatInner(a, false, 0)}`)
      .join(', ')})`;
  }
  return out;
}

function pad(text: string, spec: Spec): string {
  if (spec.width === undefined || text.length >= spec.width) return text;
  const fill = spec.width - text.length;
  if (spec.minus) return text + ' '.repeat(fill);
  if (spec.zero && /^[+-]?\d/.test(text)) {
    const sign = /^[+-]/.test(text) ? text[0] : '';
    return sign + '0'.repeat(fill) + text.slice(sign.length);
  }
  return ' '.repeat(fill) + text;
}

function intOf(v: unknown): number | undefined {
  if (v instanceof GoInt) return v.value;
  if (v instanceof GoEnum) return v.value;
  return undefined;
}

function signed(n: number | string, spec: Spec, negative: boolean): string {
  const body = String(n);
  if (negative) return body;
  if (spec.plus) return '+' + body;
  if (spec.space) return ' ' + body;
  return body;
}

function formatVerb(verb: string, arg: unknown, spec: Spec): string {
  const bad = () => `%!${verb}(${typeName(arg)}=${formatInner(arg, false, 0)})`;
  switch (verb) {
    case 'v':
      if (spec.sharp && typeof arg === 'string') return quoteGo(arg);
      return arg === undefined ? '<nil>' : formatInner(arg, spec.plus, 0);
    case 'T':
      return typeName(arg);
    case 's': {
      if (typeof arg === 'string') return spec.precision !== undefined ? [...arg].slice(0, spec.precision).join('') : arg;
      if (arg === undefined || arg === null) return '%!s(<nil>)';
      if (arg instanceof GoEnum || arg instanceof GoStringer) return formatInner(arg, false, 0);
      if (typeof arg === 'boolean' || typeof arg === 'number' || arg instanceof GoInt) return bad();
      return formatInner(arg, false, 0);
    }
    case 'q': {
      if (typeof arg === 'string') return spec.sharp && !arg.includes('`') ? '`' + arg + '`' : quoteGo(arg);
      const n = intOf(arg);
      if (n !== undefined) return `'${String.fromCodePoint(n)}'`;
      if (arg instanceof GoStringer) return quoteGo(arg.toString());
      return bad();
    }
    case 'd': {
      const n = intOf(arg);
      if (n === undefined) {
        if (Array.isArray(arg)) return `[${arg.map((a) => formatVerb('d', a, { ...spec, width: undefined })).join(' ')}]`;
        return bad();
      }
      return signed(Math.abs(n) === n ? n : `-${Math.abs(n)}`, spec, n < 0);
    }
    case 'b':
    case 'o':
    case 'O':
    case 'x':
    case 'X': {
      const n = intOf(arg);
      if (n === undefined) {
        if ((verb === 'x' || verb === 'X') && typeof arg === 'string') {
          const hex = Buffer.from(arg).toString('hex');
          return verb === 'X' ? hex.toUpperCase() : hex;
        }
        return bad();
      }
      const base = verb === 'b' ? 2 : verb === 'o' || verb === 'O' ? 8 : 16;
      let digits = Math.abs(n).toString(base);
      if (verb === 'X') digits = digits.toUpperCase();
      let prefix = '';
      if (verb === 'O') prefix = '0o';
      else if (spec.sharp) prefix = verb === 'x' ? '0x' : verb === 'X' ? '0X' : verb === 'o' ? '0' : verb === 'b' ? '0b' : '';
      return signed((n < 0 ? '-' : '') + prefix + digits, spec, n < 0);
    }
    case 'c': {
      const n = intOf(arg);
      return n === undefined ? bad() : String.fromCodePoint(n);
    }
    case 't':
      return typeof arg === 'boolean' ? String(arg) : bad();
    case 'f':
    case 'F':
    case 'e':
    case 'E':
    case 'g':
    case 'G': {
      const f = typeof arg === 'number' ? arg : undefined;
      if (f === undefined) return bad();
      const prec = spec.precision;
      let text: string;
      if (verb === 'f' || verb === 'F') text = f.toFixed(prec ?? 6);
      else if (verb === 'e' || verb === 'E') text = goExponent(f.toExponential(prec ?? 6));
      else text = prec === undefined ? formatFloat(f) : goExponent(Number(f.toPrecision(prec || 1)).toString());
      if (verb === 'E' || verb === 'G') text = text.toUpperCase();
      return signed(text, spec, f < 0);
    }
    default:
      return `%!${verb}(${typeName(arg)}=${formatInner(arg, false, 0)})`;
  }
}

/** JavaScript's `1e+6` exponent as Go writes it: `1e+06`. */
function goExponent(text: string): string {
  return text.replace(/e([+-])(\d)$/, 'e$10$2');
}
