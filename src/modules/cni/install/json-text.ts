/** JSON that does not parse; names where it came from and the line and column of the problem. */
export class JsonTextError extends Error {
  constructor(
    readonly source: string,
    readonly line: number,
    readonly column: number,
    readonly reason: string,
  ) {
    super(`${source}: invalid JSON at line ${line} column ${column}: ${reason}`);
    this.name = 'JsonTextError';
  }
}

/**
 * JSON.parse with a useful error: V8's messages only sometimes carry a position, so on failure
 * the text is scanned again to find the first offending character.
 * @param source what the text is, for the message (a file path, `--flag` or setting name).
 */
export function parseJsonText(text: string, source: string): unknown {
  try {
    return JSON.parse(text);
  } catch (err) {
    const found = locateJsonError(text) ?? { offset: text.length, reason: (err as Error).message };
    const { line, column } = lineColumn(text, found.offset);
    throw new JsonTextError(source, line, column, found.reason);
  }
}

/** The CNI config file form: keys sorted at every level, two-space indent, trailing newline. */
export function formatCniJson(value: unknown): string {
  return JSON.stringify(sortKeys(value), null, 2) + '\n';
}

function sortKeys(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(sortKeys);
  if (value !== null && typeof value === 'object') {
    const out: Record<string, unknown> = {};
    for (const key of Object.keys(value).sort()) out[key] = sortKeys((value as Record<string, unknown>)[key]);
    return out;
  }
  return value;
}

/** `a JSON object`, `an array`, ... for messages about the shape of parsed JSON. */
export function jsonKind(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  if (typeof value === 'object') return 'an object';
  if (typeof value === 'string') return 'a string';
  if (typeof value === 'number') return 'a number';
  return `a ${typeof value}`;
}

export function isJsonObject(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}

function lineColumn(text: string, offset: number): { line: number; column: number } {
  const before = text.slice(0, offset);
  const line = before.split('\n').length;
  const column = offset - (before.lastIndexOf('\n') + 1) + 1;
  return { line, column };
}

class Located {
  constructor(
    readonly offset: number,
    readonly reason: string,
  ) {}
}

const NUMBER = /-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?/y;
const HEX4 = /^[0-9a-fA-F]{4}$/;

/** A strict JSON scanner that only reports where the first error is (RFC 8259 grammar). */
function locateJsonError(text: string): Located | undefined {
  let i = 0;
  const fail = (reason: string, at = i): never => {
    throw new Located(at, reason);
  };
  const seen = (at: number) => (at >= text.length ? 'end of input' : JSON.stringify(text[at]));
  const ws = () => {
    while (i < text.length && (text[i] === ' ' || text[i] === '\t' || text[i] === '\n' || text[i] === '\r')) i++;
  };
  const string = () => {
    const start = i;
    i++;
    while (i < text.length) {
      const ch = text[i];
      if (ch === '"') {
        i++;
        return;
      }
      if (ch === '\\') {
        const next = text[i + 1];
        if (next !== undefined && '"\\/bfnrt'.includes(next)) i += 2;
        else if (next === 'u' && HEX4.test(text.slice(i + 2, i + 6))) i += 6;
        else fail('invalid escape sequence in a string');
        continue;
      }
      if (ch.charCodeAt(0) < 0x20) fail('control character in a string (write a newline as \\n)');
      i++;
    }
    fail('unterminated string', start);
  };
  const value = (): void => {
    ws();
    const c = text[i];
    if (c === '{') {
      i++;
      ws();
      if (text[i] === '}') return void i++;
      for (;;) {
        ws();
        if (text[i] !== '"') fail(`expected a property name in double quotes, found ${seen(i)}`);
        string();
        ws();
        if (text[i] !== ':') fail(`expected ':' after the property name, found ${seen(i)}`);
        i++;
        value();
        ws();
        if (text[i] === ',') {
          i++;
          continue;
        }
        if (text[i] === '}') return void i++;
        fail(`expected ',' or '}' after a property value, found ${seen(i)}`);
      }
    }
    if (c === '[') {
      i++;
      ws();
      if (text[i] === ']') return void i++;
      for (;;) {
        value();
        ws();
        if (text[i] === ',') {
          i++;
          continue;
        }
        if (text[i] === ']') return void i++;
        fail(`expected ',' or ']' after an array element, found ${seen(i)}`);
      }
    }
    if (c === '"') return string();
    if (c === '-' || (c !== undefined && c >= '0' && c <= '9')) {
      NUMBER.lastIndex = i;
      const m = NUMBER.exec(text);
      if (!m || m[0] === '-') fail('invalid number');
      i += m![0].length;
      return;
    }
    for (const word of ['true', 'false', 'null']) {
      if (text.startsWith(word, i)) {
        i += word.length;
        return;
      }
    }
    fail(`expected a value, found ${seen(i)}`);
  };
  try {
    value();
    ws();
    if (i < text.length) fail(`unexpected ${seen(i)} after the JSON value`);
  } catch (err) {
    if (err instanceof Located) return err;
    throw err;
  }
  return undefined;
}
