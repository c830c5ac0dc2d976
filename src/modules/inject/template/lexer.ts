/**
 * The lexer of Go's text/template: text outside `{{ }}`, and inside actions the tokens of the
 * action language. Trim markers (`{{- ` and ` -}}`) remove the white space next to the action;
 * comments (`{{/* ... *\/}}`) are dropped here.
 */

export type TokenType =
  | 'text'
  | 'leftDelim'
  | 'rightDelim'
  | 'leftParen'
  | 'rightParen'
  | 'pipe'
  | 'declare'
  | 'assign'
  | 'comma'
  | 'field'
  | 'variable'
  | 'identifier'
  | 'keyword'
  | 'dot'
  | 'string'
  | 'rawString'
  | 'char'
  | 'number'
  | 'bool'
  | 'nil'
  | 'space'
  | 'eof';

export interface Token {
  type: TokenType;
  value: string;
  line: number;
  /** Offset in the source, for error context. */
  pos: number;
}

export const KEYWORDS = new Set(['block', 'break', 'continue', 'define', 'else', 'end', 'if', 'range', 'template', 'with']);

const LEFT = '{{';
const RIGHT = '}}';
const TRIM_LEFT = '{{- ';
const isSpace = (c: string) => c === ' ' || c === '\t' || c === '\r' || c === '\n';
const isAlnum = (c: string) => /[\p{L}\p{Nd}_]/u.test(c);

export class LexError extends Error {
  constructor(
    message: string,
    readonly line: number,
  ) {
    super(message);
  }
}

/** Tokenizes a whole template. */
export function lex(input: string): Token[] {
  const tokens: Token[] = [];
  let pos = 0;
  let line = 1;
  const advanceLines = (from: number, to: number) => {
    for (let i = from; i < to; i++) if (input.charCodeAt(i) === 10) line++;
  };

  while (pos < input.length) {
    const next = input.indexOf(LEFT, pos);
    const textEnd = next < 0 ? input.length : next;
    let text = input.slice(pos, textEnd);
    const trimBefore = next >= 0 && input.startsWith(TRIM_LEFT.slice(0, 3), next) && isSpace(input[next + 3] ?? '');
    if (trimBefore) text = text.replace(/[ \t\r\n]+$/, '');
    if (text.length > 0) tokens.push({ type: 'text', value: text, line, pos });
    advanceLines(pos, textEnd);
    if (next < 0) {
      pos = input.length;
      break;
    }
    pos = next;
    // The action.
    const actionLine = line;
    let p = next + LEFT.length;
    if (trimBefore) p += 2;
    // Comment?
    const commentStart = p;
    if (input.startsWith('/*', commentStart)) {
      const close = input.indexOf('*/', commentStart + 2);
      if (close < 0) throw new LexError('unclosed comment', actionLine);
      let after = close + 2;
      let trimAfter = false;
      if (input.startsWith(' -' + RIGHT, after) || input.startsWith('\t-' + RIGHT, after) || input.startsWith('\n-' + RIGHT, after) || input.startsWith('\r-' + RIGHT, after)) {
        trimAfter = true;
        after += 2;
      }
      if (!input.startsWith(RIGHT, after)) throw new LexError('comment ends before closing delimiter', actionLine);
      advanceLines(pos, after + RIGHT.length);
      pos = after + RIGHT.length;
      if (trimAfter) pos = skipSpaceCountingLines(pos);
      continue;
    }
    tokens.push({ type: 'leftDelim', value: LEFT, line, pos: next });
    const result = lexInside(input, p, line, tokens);
    line = result.line;
    pos = result.pos;
    if (result.trimAfter) pos = skipSpaceCountingLines(pos);
  }
  tokens.push({ type: 'eof', value: '', line, pos: input.length });
  return tokens;

  function skipSpaceCountingLines(p: number): number {
    while (p < input.length && isSpace(input[p])) {
      if (input[p] === '\n') line++;
      p++;
    }
    return p;
  }
}

/** Lexes the inside of an action from `start`; returns where the action ends. */
function lexInside(input: string, start: number, startLine: number, tokens: Token[]): { pos: number; line: number; trimAfter: boolean } {
  let pos = start;
  let line = startLine;
  let parenDepth = 0;
  const emit = (type: TokenType, from: number, value = input.slice(from, pos)) => tokens.push({ type, value, line, pos: from });
  for (;;) {
    if (pos >= input.length) throw new LexError('unclosed action', line);
    // Closing delimiter, with optional trim marker.
    if (isSpace(input[pos]) && input.startsWith('-' + RIGHT, pos + 1)) {
      if (input[pos] === '\n') line++;
      if (parenDepth > 0) throw new LexError('unclosed left paren', line);
      tokens.push({ type: 'rightDelim', value: RIGHT, line, pos: pos + 2 });
      return { pos: pos + 2 + RIGHT.length, line, trimAfter: true };
    }
    if (input.startsWith(RIGHT, pos)) {
      if (parenDepth > 0) throw new LexError('unclosed left paren', line);
      tokens.push({ type: 'rightDelim', value: RIGHT, line, pos });
      return { pos: pos + RIGHT.length, line, trimAfter: false };
    }
    const c = input[pos];
    const from = pos;
    if (isSpace(c)) {
      // Stop before a space that starts the closing trim marker (" -}}").
      while (pos < input.length && isSpace(input[pos]) && !input.startsWith('-' + RIGHT, pos + 1)) {
        if (input[pos] === '\n') line++;
        pos++;
      }
      if (pos > from) emit('space', from);
      continue;
    }
    if (c === '=') {
      pos++;
      emit('assign', from);
      continue;
    }
    if (c === ':') {
      if (input[pos + 1] !== '=') throw new LexError('expected :=', line);
      pos += 2;
      emit('declare', from);
      continue;
    }
    if (c === '|') {
      pos++;
      emit('pipe', from);
      continue;
    }
    if (c === ',') {
      pos++;
      emit('comma', from);
      continue;
    }
    if (c === '(') {
      parenDepth++;
      pos++;
      emit('leftParen', from);
      continue;
    }
    if (c === ')') {
      parenDepth--;
      if (parenDepth < 0) throw new LexError(`unexpected right paren`, line);
      pos++;
      emit('rightParen', from);
      continue;
    }
    if (c === '"') {
      pos++;
      for (;;) {
        const ch = input[pos];
        if (ch === undefined || ch === '\n') throw new LexError('unterminated quoted string', line);
        pos++;
        if (ch === '\\') {
          if (input[pos] === undefined || input[pos] === '\n') throw new LexError('unterminated quoted string', line);
          pos++;
        } else if (ch === '"') break;
      }
      emit('string', from);
      continue;
    }
    if (c === '`') {
      const close = input.indexOf('`', pos + 1);
      if (close < 0) throw new LexError('unterminated raw quoted string', line);
      for (let i = pos; i < close; i++) if (input[i] === '\n') line++;
      pos = close + 1;
      emit('rawString', from);
      continue;
    }
    if (c === "'") {
      pos++;
      for (;;) {
        const ch = input[pos];
        if (ch === undefined || ch === '\n') throw new LexError('unterminated character constant', line);
        pos++;
        if (ch === '\\') pos++;
        else if (ch === "'") break;
      }
      emit('char', from);
      continue;
    }
    if (c === '$') {
      pos++;
      while (pos < input.length && isAlnum(input[pos])) pos++;
      emit('variable', from);
      continue;
    }
    if (c === '.') {
      // A field (.Name), or dot alone, or a number (.5).
      if (pos + 1 < input.length && /[0-9]/.test(input[pos + 1])) {
        pos = lexNumber(input, pos, line);
        emit('number', from);
        continue;
      }
      pos++;
      if (pos < input.length && isAlnum(input[pos])) {
        while (pos < input.length && isAlnum(input[pos])) pos++;
        emit('field', from);
      } else emit('dot', from);
      continue;
    }
    if (c === '+' || c === '-' || /[0-9]/.test(c)) {
      pos = lexNumber(input, pos, line);
      emit('number', from);
      continue;
    }
    if (isAlnum(c)) {
      while (pos < input.length && isAlnum(input[pos])) pos++;
      const word = input.slice(from, pos);
      // A word followed by anything but space, delimiter, paren, pipe or field start is bad.
      const after = input[pos];
      if (after !== undefined && !isSpace(after) && !input.startsWith(RIGHT, pos) && !'()|.,=:'.includes(after)) {
        throw new LexError(`bad character ${JSON.stringify(after)}`, line);
      }
      if (KEYWORDS.has(word)) emit('keyword', from, word);
      else if (word === 'true' || word === 'false') emit('bool', from, word);
      else if (word === 'nil') emit('nil', from, word);
      else emit('identifier', from, word);
      continue;
    }
    throw new LexError(`unrecognized character in action: ${JSON.stringify(c)}`, line);
  }
}

function lexNumber(input: string, start: number, line: number): number {
  let pos = start;
  if (input[pos] === '+' || input[pos] === '-') pos++;
  let digits = '0123456789_';
  if (input[pos] === '0' && /[xXoObB]/.test(input[pos + 1] ?? '')) {
    const base = input[pos + 1].toLowerCase();
    pos += 2;
    digits = base === 'x' ? '0123456789abcdefABCDEF_' : base === 'o' ? '01234567_' : '01_';
  }
  while (pos < input.length && digits.includes(input[pos])) pos++;
  if (input[pos] === '.') {
    pos++;
    while (pos < input.length && digits.includes(input[pos])) pos++;
  }
  if (digits.length === 11 && /[eE]/.test(input[pos] ?? '')) {
    pos++;
    if (input[pos] === '+' || input[pos] === '-') pos++;
    while (pos < input.length && /[0-9_]/.test(input[pos])) pos++;
  }
  if (pos < input.length && isAlnum(input[pos])) throw new LexError(`bad number syntax: ${JSON.stringify(input.slice(start, pos + 1))}`, line);
  return pos;
}
