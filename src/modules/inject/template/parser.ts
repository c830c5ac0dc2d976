import { LexError, lex, Token } from './lexer';

/**
 * The parser of Go's text/template: the parse tree of a template and of the templates it
 * defines (`define`, `block`). Like Go it checks at parse time that every function named
 * exists and every variable used was declared.
 */

export type Node =
  | { type: 'text'; text: string; line: number }
  | { type: 'action'; pipe: Pipe; line: number }
  | { type: 'if' | 'with'; pipe: Pipe; list: Node[]; elseList?: Node[]; line: number }
  | { type: 'range'; pipe: Pipe; list: Node[]; elseList?: Node[]; line: number }
  | { type: 'template'; name: string; pipe?: Pipe; line: number }
  | { type: 'break' | 'continue'; line: number };

export interface Pipe {
  line: number;
  /** Variables declared (`:=`) or assigned (`=`). */
  decl: string[];
  isAssign: boolean;
  cmds: Command[];
}

export interface Command {
  line: number;
  args: Arg[];
}

export type Arg =
  | { type: 'field'; ident: string[] }
  | { type: 'variable'; ident: string[] }
  | { type: 'chain'; node: Arg; fields: string[] }
  | { type: 'identifier'; name: string }
  | { type: 'dot' }
  | { type: 'nil' }
  | { type: 'bool'; value: boolean }
  | { type: 'string'; value: string }
  | { type: 'number'; text: string; value: number; isInt: boolean; floatSyntax: boolean }
  | { type: 'pipe'; pipe: Pipe };

export class TemplateError extends Error {
  constructor(
    readonly template: string,
    readonly line: number | undefined,
    readonly detail: string,
  ) {
    super(line === undefined ? `template: ${template}: ${detail}` : `template: ${template}:${line}: ${detail}`);
    this.name = 'TemplateError';
  }
}

/** Parses `text` named `name`; returns the tree of each template it holds (itself first). */
export function parseTemplate(name: string, text: string, functions: ReadonlySet<string>): Map<string, Node[]> {
  let tokens: Token[];
  try {
    tokens = lex(text);
  } catch (err) {
    if (err instanceof LexError) throw new TemplateError(name, err.line, err.message);
    throw err;
  }
  return new Parser(name, tokens, functions).parse();
}

const MAX_NESTING = 1000;

class Parser {
  private i = 0;
  private readonly trees = new Map<string, Node[]>();
  /** Declared variables, innermost scope last. */
  private vars: string[] = ['$'];
  private rangeDepth = 0;
  private nesting = 0;

  constructor(
    private readonly name: string,
    private readonly tokens: Token[],
    private readonly functions: ReadonlySet<string>,
  ) {}

  parse(): Map<string, Node[]> {
    const list: Node[] = [];
    for (;;) {
      const t = this.peek();
      if (t.type === 'eof') break;
      if (t.type === 'leftDelim' && this.peekKeywordAfterDelim() === 'define') {
        this.parseDefine();
        continue;
      }
      const node = this.textOrAction();
      if (node.kind === 'end' || node.kind === 'else') this.fail(t.line, `unexpected {{${node.kind}}}`);
      if (node.node) list.push(node.node);
    }
    // The main template; a define of the same name does not replace a non-empty body.
    const existing = this.trees.get(this.name);
    if (!existing || list.some((n) => n.type !== 'text' || n.text.trim() !== '')) this.trees.set(this.name, list);
    return this.trees;
  }

  private fail(line: number | undefined, message: string): never {
    throw new TemplateError(this.name, line, message);
  }

  private peek(): Token {
    return this.tokens[this.i];
  }

  private next(): Token {
    return this.tokens[this.i++];
  }

  /** The next token that is not a space. */
  private nextNonSpace(): Token {
    let t = this.next();
    while (t.type === 'space') t = this.next();
    return t;
  }

  private peekNonSpace(): Token {
    let j = this.i;
    while (this.tokens[j].type === 'space') j++;
    return this.tokens[j];
  }

  private peekKeywordAfterDelim(): string | undefined {
    let j = this.i + 1;
    while (this.tokens[j]?.type === 'space') j++;
    return this.tokens[j]?.type === 'keyword' ? this.tokens[j].value : undefined;
  }

  private expectRightDelim(context: string): void {
    const t = this.nextNonSpace();
    if (t.type !== 'rightDelim') this.fail(t.line, `unexpected ${describe(t)} in ${context}`);
  }

  private parseDefine(): void {
    const start = this.next(); // {{
    this.nextNonSpace(); // define
    const nameTok = this.nextNonSpace();
    if (nameTok.type !== 'string' && nameTok.type !== 'rawString') this.fail(nameTok.line, `unexpected ${describe(nameTok)} in define clause`);
    const name = unquote(nameTok, (m) => this.fail(nameTok.line, m));
    this.expectRightDelim('define clause');
    const saved = this.vars;
    this.vars = ['$'];
    const { list, end } = this.itemList(start.line);
    if (end !== 'end') this.fail(start.line, 'unexpected {{else}} in define');
    this.vars = saved;
    this.addTree(name, list, start.line);
  }

  private addTree(name: string, list: Node[], line: number): void {
    const existing = this.trees.get(name);
    const isEmpty = (l: Node[]) => l.every((n) => n.type === 'text' && n.text.trim() === '');
    if (existing && !isEmpty(existing) && !isEmpty(list)) this.fail(line, `template: multiple definition of template "${name}"`);
    if (!existing || !isEmpty(list)) this.trees.set(name, list);
  }

  /** Items until {{end}} or {{else}}: which one ended the list. */
  private itemList(line: number): { list: Node[]; end: 'end' | 'else' } {
    if (++this.nesting > MAX_NESTING) this.fail(line, `nesting deeper than ${MAX_NESTING}`);
    const list: Node[] = [];
    for (;;) {
      const t = this.peek();
      if (t.type === 'eof') this.fail(line, 'unexpected EOF');
      const r = this.textOrAction();
      if (r.kind === 'end' || r.kind === 'else') {
        this.nesting--;
        return { list, end: r.kind };
      }
      if (r.node) list.push(r.node);
    }
  }

  private textOrAction(): { kind: 'node' | 'end' | 'else'; node?: Node } {
    const t = this.next();
    if (t.type === 'text') return { kind: 'node', node: { type: 'text', text: t.value, line: t.line } };
    if (t.type !== 'leftDelim') this.fail(t.line, `unexpected ${describe(t)}`);
    const k = this.peekNonSpace();
    if (k.type === 'keyword') {
      this.nextNonSpace();
      switch (k.value) {
        case 'end':
          this.expectRightDelim('end');
          return { kind: 'end' };
        case 'else':
          // `else if` / `else with`: leave the keyword for the enclosing control to read.
          if (this.peekNonSpace().type === 'keyword') return { kind: 'else' };
          this.expectRightDelim('else');
          return { kind: 'else' };
        case 'if':
        case 'with':
        case 'range':
          return { kind: 'node', node: this.control(k.value, k.line) };
        case 'template':
        case 'block':
          return { kind: 'node', node: this.templateCall(k.value, k.line) };
        case 'break':
        case 'continue':
          if (this.rangeDepth === 0) this.fail(k.line, `{{${k.value}}} outside {{range}}`);
          this.expectRightDelim(k.value);
          return { kind: 'node', node: { type: k.value, line: k.line } };
        case 'define':
          this.fail(k.line, 'unexpected define (only at top level)');
      }
    }
    const pipe = this.pipeline('command', 'rightDelim', true);
    return { kind: 'node', node: { type: 'action', pipe, line: t.line } };
  }

  private control(keyword: 'if' | 'with' | 'range', line: number): Node {
    const scope = this.vars.length;
    const pipe = this.pipeline(keyword, 'rightDelim', true, keyword === 'range');
    if (keyword === 'range') this.rangeDepth++;
    const { list, end } = this.itemList(line);
    if (keyword === 'range') this.rangeDepth--;
    let elseList: Node[] | undefined;
    if (end === 'else') {
      const after = this.peekNonSpace();
      if ((keyword === 'if' || keyword === 'with') && after.type === 'keyword' && after.value === keyword) {
        // `{{else if ...}}` is `{{else}}{{if ...}}...{{end}}{{end}}`, sharing the one {{end}}.
        this.nextNonSpace();
        elseList = [this.control(keyword, after.line)];
      } else {
        if (after.type === 'keyword' && after.value !== 'if' && after.value !== 'with') this.fail(after.line, `unexpected ${after.value} after else`);
        if (after.type === 'keyword') this.fail(after.line, `else ${after.value} inside {{${keyword}}}`);
        const r = this.itemList(line);
        if (r.end !== 'end') this.fail(line, `expected end; found {{else}}`);
        elseList = r.list;
      }
    }
    this.vars.length = scope;
    return { type: keyword, pipe, list, elseList, line };
  }

  private templateCall(keyword: 'template' | 'block', line: number): Node {
    const nameTok = this.nextNonSpace();
    if (nameTok.type !== 'string' && nameTok.type !== 'rawString') this.fail(nameTok.line, `unexpected ${describe(nameTok)} in ${keyword} clause`);
    const name = unquote(nameTok, (m) => this.fail(nameTok.line, m));
    let pipe: Pipe | undefined;
    if (this.peekNonSpace().type !== 'rightDelim') pipe = this.pipeline(keyword, 'rightDelim', false);
    else this.expectRightDelim(keyword);
    if (keyword === 'block') {
      if (!pipe) this.fail(line, 'missing pipeline in block clause');
      const saved = this.vars;
      this.vars = ['$'];
      const { list, end } = this.itemList(line);
      if (end !== 'end') this.fail(line, 'unexpected {{else}} in block');
      this.vars = saved;
      this.addTree(name, list, line);
    }
    return { type: 'template', name, pipe, line };
  }

  /** A pipeline up to `end` (consumed), with optional variable declarations. */
  private pipeline(context: string, end: 'rightDelim' | 'rightParen', allowDecl: boolean, isRange = false): Pipe {
    const first = this.peekNonSpace();
    const pipe: Pipe = { line: first.line, decl: [], isAssign: false, cmds: [] };
    if (allowDecl && first.type === 'variable') {
      // `$x :=`, `$x =`, or (range) `$i, $v :=`.
      const save = this.i;
      const v = this.nextNonSpace();
      const op = this.nextNonSpace();
      if (op.type === 'declare' || op.type === 'assign') {
        pipe.decl.push(v.value);
        pipe.isAssign = op.type === 'assign';
      } else if (op.type === 'comma' && isRange) {
        const v2 = this.nextNonSpace();
        const op2 = this.nextNonSpace();
        if (v2.type !== 'variable' || (op2.type !== 'declare' && op2.type !== 'assign')) this.fail(v.line, `range can only initialize variables`);
        pipe.decl.push(v.value, v2.value);
        pipe.isAssign = op2.type === 'assign';
      } else {
        this.i = save;
      }
      if (pipe.decl.length > 0) {
        if (pipe.isAssign) for (const name of pipe.decl) this.checkVariable(name, v.line);
        else this.vars.push(...pipe.decl);
      }
    }
    for (;;) {
      const t = this.peekNonSpace();
      if (t.type === end) {
        this.nextNonSpace();
        if (pipe.cmds.length === 0) this.fail(t.line, `missing value for ${context}`);
        for (const cmd of pipe.cmds.slice(1)) {
          const head = cmd.args[0];
          if (head.type === 'bool' || head.type === 'dot' || head.type === 'nil' || head.type === 'number' || head.type === 'string') {
            this.fail(cmd.line, `non executable command in pipeline stage ${pipe.cmds.indexOf(cmd) + 1}`);
          }
        }
        return pipe;
      }
      if (t.type === 'eof' || t.type === 'rightDelim' || t.type === 'rightParen') this.fail(t.line, `unexpected ${describe(t)} in ${context}`);
      pipe.cmds.push(this.command(end));
    }
  }

  private command(end: 'rightDelim' | 'rightParen'): Command {
    const cmd: Command = { line: this.peekNonSpace().line, args: [] };
    for (;;) {
      this.skipSpaces();
      const t = this.peek();
      if (t.type === end || t.type === 'rightDelim' || t.type === 'rightParen' || t.type === 'eof') break;
      if (t.type === 'pipe') {
        this.next();
        break;
      }
      const operand = this.operand();
      if (!operand) this.fail(t.line, `unexpected ${describe(t)} in operand`);
      cmd.args.push(operand);
      // After an operand: a space, a pipe or the end; anything else is glued to it.
      const after = this.peek();
      if (!['space', 'pipe', end, 'rightDelim', 'rightParen'].includes(after.type)) this.fail(after.line, `unexpected ${describe(after)} in operand`);
    }
    if (cmd.args.length === 0) this.fail(cmd.line, 'missing command');
    return cmd;
  }

  private skipSpaces(): void {
    while (this.peek().type === 'space') this.i++;
  }

  /** A term followed by `.Field` accessors. */
  private operand(): Arg | undefined {
    const term = this.term();
    if (!term) return undefined;
    if (this.peek().type !== 'field') return term;
    const fields: string[] = [];
    while (this.peek().type === 'field') fields.push(this.next().value.slice(1));
    switch (term.type) {
      case 'field':
        return { type: 'field', ident: [...term.ident, ...fields] };
      case 'variable':
        return { type: 'variable', ident: [...term.ident, ...fields] };
      case 'bool':
      case 'string':
      case 'number':
      case 'nil':
      case 'dot':
        this.fail(this.peek().line, `unexpected . after term`);
      // falls through (fail never returns)
      default:
        return { type: 'chain', node: term, fields };
    }
  }

  private term(): Arg | undefined {
    const t = this.next();
    switch (t.type) {
      case 'identifier':
        if (!this.functions.has(t.value)) this.fail(t.line, `function "${t.value}" not defined`);
        return { type: 'identifier', name: t.value };
      case 'dot':
        return { type: 'dot' };
      case 'nil':
        return { type: 'nil' };
      case 'variable': {
        this.checkVariable(t.value, t.line);
        return { type: 'variable', ident: [t.value] };
      }
      case 'field':
        return { type: 'field', ident: [t.value.slice(1)] };
      case 'bool':
        return { type: 'bool', value: t.value === 'true' };
      case 'char':
      case 'number':
        return parseNumber(t, (m) => this.fail(t.line, m));
      case 'string':
      case 'rawString':
        return { type: 'string', value: unquote(t, (m) => this.fail(t.line, m)) };
      case 'leftParen': {
        const pipe = this.pipeline('parenthesized pipeline', 'rightParen', false);
        return { type: 'pipe', pipe };
      }
      default:
        this.i--;
        return undefined;
    }
  }

  private checkVariable(name: string, line: number): void {
    if (!this.vars.includes(name)) this.fail(line, `undefined variable "${name}"`);
  }
}

function describe(t: Token): string {
  switch (t.type) {
    case 'eof':
      return 'EOF';
    case 'rightDelim':
      return '"}}"';
    case 'rightParen':
      return '")"';
    default:
      return `<${t.value}>`;
  }
}

/** A Go string literal's value. */
export function unquote(t: Token, fail: (m: string) => never): string {
  const raw = t.value;
  if (t.type === 'rawString') return raw.slice(1, -1).replace(/\r/g, '');
  let out = '';
  for (let i = 1; i < raw.length - 1; i++) {
    const c = raw[i];
    if (c !== '\\') {
      out += c;
      continue;
    }
    const e = raw[++i];
    const simple: Record<string, string> = { n: '\n', t: '\t', r: '\r', '\\': '\\', '"': '"', "'": "'", a: '\x07', b: '\b', f: '\f', v: '\v' };
    if (e in simple) out += simple[e];
    else if (e === 'x') {
      out += String.fromCharCode(parseInt(raw.slice(i + 1, i + 3), 16));
      i += 2;
    } else if (e === 'u' || e === 'U') {
      const n = e === 'u' ? 4 : 8;
      out += String.fromCodePoint(parseInt(raw.slice(i + 1, i + 1 + n), 16));
      i += n;
    } else if (/[0-7]/.test(e)) {
      out += String.fromCharCode(parseInt(raw.slice(i, i + 3), 8));
      i += 2;
    } else fail(`invalid syntax: ${raw}`);
  }
  return out;
}

function parseNumber(t: Token, fail: (m: string) => never): Arg {
  if (t.type === 'char') {
    const inner = unquote({ ...t, type: 'string', value: `"${t.value.slice(1, -1).replace(/"/g, '\\"')}"` }, fail);
    return { type: 'number', text: t.value, value: inner.codePointAt(0) ?? 0, isInt: true, floatSyntax: false };
  }
  const text = t.value.replace(/_/g, '');
  const sign = text.startsWith('-') ? -1 : 1;
  const body = text.replace(/^[+-]/, '');
  let value: number;
  if (/^0[xX]/.test(body)) value = parseInt(body.slice(2), 16);
  else if (/^0[oO]/.test(body)) value = parseInt(body.slice(2), 8);
  else if (/^0[bB]/.test(body)) value = parseInt(body.slice(2), 2);
  else if (/^0[0-7]+$/.test(body)) value = parseInt(body.slice(1), 8);
  else value = Number(body);
  if (!Number.isFinite(value)) fail(`illegal number syntax: ${JSON.stringify(t.value)}`);
  value *= sign;
  // Go: a constant written with a point or exponent is a float64 where the type is open.
  const floatSyntax = !/^0[xX]/.test(body) && /[.eE]/.test(body);
  return { type: 'number', text: t.value, value, isInt: Number.isInteger(value), floatSyntax };
}
