import { formatValue, setFieldReader } from './format';
import { Arg, Command, Node, parseTemplate, Pipe, TemplateError } from './parser';
import {
  compareStrings,
  dynamicFromJSON,
  fromJSON,
  GoEnum,
  GoInt,
  GoMap,
  GoNil,
  GoStringer,
  GoStruct,
  isTrue,
  StructType,
  T,
  typeName,
} from './values';

/**
 * The executor of Go's text/template over the values of values.ts, with Go's rules: missing
 * map keys are "no value", missing struct fields their zero, methods on nil pointers are
 * called, `and`/`or` short-circuit, range over maps goes in key order, and arguments are
 * checked against the function's parameter types.
 */

/** What a function parameter accepts: `value` takes anything unconverted (Go's reflect.Value). */
export type ParamType = 'any' | 'string' | 'int' | 'float64' | 'bool' | 'map' | 'slice' | 'value';

export interface GoFunc {
  params: ParamType[];
  /** The type of the `...` parameter, when the function is variadic. */
  variadic?: ParamType;
  fn: (...args: unknown[]) => unknown;
}

export type FuncMap = ReadonlyMap<string, GoFunc>;

/** Thrown by a function to fail the call (`error calling f: ...`). */
export class FuncError extends Error {}

export interface ExecLimits {
  /** Largest output, in characters. */
  maxOutput: number;
  /** Most evaluation steps (guards against templates that never end). */
  maxSteps: number;
  /** Deepest {{template}} recursion. */
  maxDepth: number;
}

export const DEFAULT_LIMITS: ExecLimits = { maxOutput: 32 * 1024 * 1024, maxSteps: 5_000_000, maxDepth: 1000 };

/** A parsed template with the templates it defines. */
export class Template {
  private constructor(
    readonly name: string,
    private readonly trees: Map<string, Node[]>,
    private readonly funcs: FuncMap,
  ) {}

  static parse(name: string, text: string, funcs: FuncMap): Template {
    return new Template(name, parseTemplate(name, text, new Set(funcs.keys())), funcs);
  }

  /** The names of the templates this one defines (itself included). */
  get definedTemplates(): string[] {
    return [...this.trees.keys()];
  }

  execute(data: unknown, limits: ExecLimits = DEFAULT_LIMITS): string {
    const state = new State(this.name, this.trees, this.funcs, limits);
    state.vars.push({ name: '$', value: data });
    state.walkList(data, this.trees.get(this.name) ?? []);
    return state.output();
  }
}

const NO_FINAL = Symbol('no final');
type Final = unknown | typeof NO_FINAL;

class BreakSignal {}
class ContinueSignal {}

class State {
  readonly vars: { name: string; value: unknown }[] = [];
  private readonly chunks: string[] = [];
  private size = 0;
  private steps = 0;
  private depth = 0;
  private line = 0;

  constructor(
    private tmpl: string,
    private readonly trees: Map<string, Node[]>,
    private readonly funcs: FuncMap,
    private readonly limits: ExecLimits,
  ) {}

  output(): string {
    return this.chunks.join('');
  }

  private fail(message: string): never {
    throw new TemplateError(this.tmpl, this.line || undefined, message);
  }

  private write(text: string): void {
    this.size += text.length;
    if (this.size > this.limits.maxOutput) this.fail(`output larger than ${this.limits.maxOutput} characters`);
    this.chunks.push(text);
  }

  private step(): void {
    if (++this.steps > this.limits.maxSteps) this.fail(`execution took more than ${this.limits.maxSteps} steps`);
  }

  walkList(dot: unknown, list: Node[]): void {
    for (const node of list) this.walk(dot, node);
  }

  private walk(dot: unknown, node: Node): void {
    this.step();
    this.line = node.line;
    switch (node.type) {
      case 'text':
        this.write(node.text);
        return;
      case 'action': {
        const mark = this.vars.length;
        const value = this.evalPipeline(dot, node.pipe);
        if (node.pipe.decl.length === 0) this.write(this.printValue(value));
        // Declarations in an action live until the end of the enclosing block.
        void mark;
        return;
      }
      case 'if':
      case 'with': {
        const mark = this.vars.length;
        const value = this.evalPipeline(dot, node.pipe);
        if (isTrue(value)) this.walkList(node.type === 'with' ? value : dot, node.list);
        else if (node.elseList) this.walkList(dot, node.elseList);
        this.vars.length = mark;
        return;
      }
      case 'range':
        this.walkRange(dot, node);
        return;
      case 'template': {
        const tree = this.trees.get(node.name);
        if (!tree) this.fail(`no such template "${node.name}"`);
        const newDot = node.pipe ? this.evalPipeline(dot, node.pipe) : undefined;
        if (++this.depth > this.limits.maxDepth) this.fail(`exceeded maximum template depth (${this.limits.maxDepth})`);
        const savedVars = this.vars.splice(0);
        const savedName = this.tmpl;
        this.vars.push({ name: '$', value: newDot });
        this.tmpl = savedName;
        this.walkList(newDot, tree);
        this.vars.splice(0, this.vars.length, ...savedVars);
        this.depth--;
        return;
      }
      case 'break':
        throw new BreakSignal();
      case 'continue':
        throw new ContinueSignal();
    }
  }

  private printValue(v: unknown): string {
    if (typeof v === 'function') this.fail(`can't print value of type func`);
    return formatValue(v);
  }

  private walkRange(dot: unknown, node: Extract<Node, { type: 'range' }>): void {
    const mark = this.vars.length;
    const value = this.evalPipeline(dot, node.pipe);
    const decl = node.pipe.decl;
    let iterations = 0;
    const one = (index: unknown, elem: unknown): boolean => {
      iterations++;
      if (decl.length > 0) {
        if (node.pipe.isAssign) this.setVar(decl[0], decl.length > 1 ? index : elem);
        else this.setTopVar(1, elem);
      }
      if (decl.length > 1) {
        if (node.pipe.isAssign) this.setVar(decl[1], elem);
        else this.setTopVar(2, index);
      }
      const inner = this.vars.length;
      try {
        this.walkList(elem, node.list);
      } catch (err) {
        if (err instanceof BreakSignal) return false;
        if (!(err instanceof ContinueSignal)) throw err;
      } finally {
        this.vars.length = inner;
      }
      return true;
    };
    if (Array.isArray(value)) {
      for (let i = 0; i < value.length; i++) if (!one(new GoInt(i), value[i])) break;
    } else if (value instanceof GoMap) {
      for (const key of value.sortedKeys()) if (!one(key, value.entries.get(key))) break;
    } else if (value instanceof GoInt) {
      if (decl.length > 1) this.fail(`can't use ${value.value} to iterate over more than one variable`);
      for (let i = 0; i < value.value; i++) if (!one(new GoInt(i), new GoInt(i, value.type))) break;
    } else if (value === undefined || value === null || value instanceof GoNil) {
      // Nothing to iterate: like Go's nil map or slice.
    } else {
      this.fail(`range can't iterate over ${formatValue(value)}`);
    }
    if (iterations === 0 && node.elseList) this.walkList(dot, node.elseList);
    this.vars.length = mark;
  }

  private setVar(name: string, value: unknown): void {
    for (let i = this.vars.length - 1; i >= 0; i--) {
      if (this.vars[i].name === name) {
        this.vars[i].value = value;
        return;
      }
    }
    this.fail(`undefined variable: ${name}`);
  }

  /** Sets the n-th variable from the top (1 = last pushed). */
  private setTopVar(n: number, value: unknown): void {
    this.vars[this.vars.length - n].value = value;
  }

  private varValue(name: string): unknown {
    for (let i = this.vars.length - 1; i >= 0; i--) if (this.vars[i].name === name) return this.vars[i].value;
    this.fail(`undefined variable: ${name}`);
  }

  private evalPipeline(dot: unknown, pipe: Pipe): unknown {
    this.line = pipe.line;
    let value: unknown = undefined;
    let final: Final = NO_FINAL;
    for (const cmd of pipe.cmds) {
      value = this.evalCommand(dot, cmd, final);
      // A nil interface{} result is "no value" (Go unwraps interfaces after each command).
      if (value === null) value = undefined;
      final = value;
    }
    for (const name of pipe.decl) {
      if (pipe.isAssign) this.setVar(name, value);
      else this.vars.push({ name, value });
    }
    return value;
  }

  private evalCommand(dot: unknown, cmd: Command, final: Final): unknown {
    this.step();
    this.line = cmd.line;
    const first = cmd.args[0];
    switch (first.type) {
      case 'field':
        return this.evalFieldChain(dot, dot, first.ident, cmd.args, final);
      case 'chain': {
        if (first.node.type === 'nil') this.fail('indirection through explicit nil');
        const receiver = this.evalArg(dot, 'value', first.node);
        return this.evalFieldChain(dot, receiver, first.fields, cmd.args, final);
      }
      case 'identifier':
        return this.evalCall(dot, first.name, cmd.args.slice(1), final);
      case 'pipe':
        this.notAFunction(cmd.args, final);
        return this.evalPipeline(dot, first.pipe);
      case 'variable': {
        const value = this.varValue(first.ident[0]);
        if (first.ident.length === 1) {
          this.notAFunction(cmd.args, final);
          return value;
        }
        return this.evalFieldChain(dot, value, first.ident.slice(1), cmd.args, final);
      }
    }
    this.notAFunction(cmd.args, final);
    switch (first.type) {
      case 'bool':
        return first.value;
      case 'dot':
        return dot;
      case 'nil':
        return this.fail('nil is not a command');
      case 'number':
        return idealConstant(first);
      case 'string':
        return first.value;
    }
  }

  private notAFunction(args: Arg[], final: Final): void {
    if (args.length > 1 || final !== NO_FINAL) this.fail(`can't give argument to non-function ${describeArg(args[0])}`);
  }

  private evalFieldChain(dot: unknown, receiver: unknown, ident: string[], args: Arg[], final: Final): unknown {
    for (let i = 0; i < ident.length - 1; i++) receiver = this.evalField(dot, ident[i], [], NO_FINAL, receiver);
    return this.evalField(dot, ident[ident.length - 1], args, final, receiver);
  }

  private evalField(dot: unknown, name: string, args: Arg[], final: Final, receiver: unknown): unknown {
    if (receiver === undefined) return undefined;
    if (receiver === null) this.fail(`nil pointer evaluating interface {}.${name}`);
    const method = methodOf(receiver, name);
    if (method) return this.callMethod(dot, name, method, args.slice(1), final);
    const hasArgs = args.length > 1 || final !== NO_FINAL;
    if (receiver instanceof GoStruct) {
      const value = readField(receiver, name);
      if (value !== NOT_A_FIELD) {
        if (hasArgs) this.fail(`${name} has arguments but cannot be invoked as function`);
        return value;
      }
    } else if (receiver instanceof GoMap) {
      if (hasArgs) this.fail(`${name} is not a method but has arguments`);
      return receiver.entries.get(name);
    } else if (receiver instanceof GoNil && receiver.type.kind === 'ptr') {
      const struct = receiver.type.struct;
      if (!struct || struct.fields.some((f) => f.go === name) || struct.open) this.fail(`nil pointer evaluating ${receiver.type.name}.${name}`);
    }
    this.fail(`can't evaluate field ${name} in type ${typeName(receiver)}`);
  }

  private callMethod(dot: unknown, name: string, method: (...a: unknown[]) => unknown, args: Arg[], final: Final): unknown {
    const values = args.map((a) => this.evalArg(dot, 'any', a));
    if (final !== NO_FINAL) values.push(final);
    if (values.length > 0) this.fail(`wrong number of args for ${name}: want 0 got ${values.length}`);
    return method();
  }

  private evalCall(dot: unknown, name: string, args: Arg[], final: Final): unknown {
    const fn = this.funcs.get(name);
    if (!fn) this.fail(`"${name}" is not a defined function`);
    if (name === 'and' || name === 'or') {
      if (args.length === 0 && final === NO_FINAL) this.fail(`wrong number of args for ${name}: want at least 1 got 0`);
      let v: unknown = undefined;
      for (const arg of args) {
        v = this.evalArg(dot, 'value', arg);
        if (isTrue(v) === (name === 'or')) return v;
      }
      if (final !== NO_FINAL) v = final;
      return v;
    }
    const numIn = args.length + (final !== NO_FINAL ? 1 : 0);
    const fixed = fn.params.length;
    if (fn.variadic) {
      if (numIn < fixed) this.fail(`wrong number of args for ${name}: want at least ${fixed} got ${args.length}`);
    } else if (numIn !== fixed) this.fail(`wrong number of args for ${name}: want ${fixed} got ${numIn}`);
    const argv: unknown[] = [];
    args.forEach((arg, i) => argv.push(this.evalArg(dot, i < fixed ? fn.params[i] : fn.variadic!, arg)));
    if (final !== NO_FINAL) {
      const type = argv.length < fixed ? fn.params[argv.length] : fn.variadic!;
      argv.push(this.validateType(final, type));
    }
    try {
      return fn.fn(...argv);
    } catch (err) {
      if (err instanceof TemplateError) throw err;
      return this.fail(`error calling ${name}: ${(err as Error).message}`);
    }
  }

  /** An argument converted to the parameter type, as Go's evalArg does. */
  private evalArg(dot: unknown, type: ParamType, arg: Arg): unknown {
    switch (arg.type) {
      case 'dot':
        return this.validateType(dot, type);
      case 'nil':
        if (type === 'any' || type === 'value' || type === 'map' || type === 'slice') return type === 'value' ? undefined : null;
        return this.fail(`cannot assign nil to ${type}`);
      case 'field':
        return this.validateType(this.evalFieldChain(dot, dot, arg.ident, [arg], NO_FINAL), type);
      case 'variable': {
        const value = this.varValue(arg.ident[0]);
        return this.validateType(arg.ident.length === 1 ? value : this.evalFieldChain(dot, value, arg.ident.slice(1), [arg], NO_FINAL), type);
      }
      case 'pipe':
        return this.validateType(this.evalPipeline(dot, arg.pipe), type);
      case 'identifier':
        return this.validateType(this.evalCall(dot, arg.name, [], NO_FINAL), type);
      case 'chain': {
        if (arg.node.type === 'nil') this.fail('indirection through explicit nil');
        const receiver = this.evalArg(dot, 'value', arg.node);
        return this.validateType(this.evalFieldChain(dot, receiver, arg.fields, [arg], NO_FINAL), type);
      }
    }
    // Constants.
    switch (type) {
      case 'bool':
        if (arg.type === 'bool') return arg.value;
        return this.fail(`expected bool; found ${describeArg(arg)}`);
      case 'string':
        if (arg.type === 'string') return arg.value;
        return this.fail(`expected string; found ${describeArg(arg)}`);
      case 'int':
        if (arg.type === 'number' && arg.isInt) return arg.value;
        return this.fail(`expected integer; found ${describeArg(arg)}`);
      case 'float64':
        if (arg.type === 'number') return arg.value;
        return this.fail(`expected float; found ${describeArg(arg)}`);
      case 'map':
      case 'slice':
        return this.fail(`can't handle ${describeArg(arg)} for arg of type ${type}`);
      default:
        if (arg.type === 'bool' || arg.type === 'string') return arg.value;
        if (arg.type === 'number') return idealConstant(arg);
        return undefined;
    }
  }

  /** A computed value checked against (and unwrapped for) the parameter type. */
  private validateType(value: unknown, type: ParamType): unknown {
    if (type === 'value') return value;
    if (value === undefined) {
      if (type === 'any' || type === 'map' || type === 'slice') return null;
      return this.fail(`invalid value; expected ${goParam(type)}`);
    }
    const wrong = () => this.fail(`wrong type for value; expected ${goParam(type)}; got ${typeName(value)}`);
    switch (type) {
      case 'any':
        return value;
      case 'string':
        return typeof value === 'string' ? value : wrong();
      case 'bool':
        return typeof value === 'boolean' ? value : wrong();
      case 'int':
        return value instanceof GoInt && value.type.kind === 'int' ? value.value : wrong();
      case 'float64':
        return typeof value === 'number' ? value : wrong();
      case 'map':
        return value instanceof GoMap || value === null ? value : wrong();
      case 'slice':
        return Array.isArray(value) || value instanceof GoNil || value === null ? value : wrong();
    }
  }
}

function goParam(type: ParamType): string {
  switch (type) {
    case 'any':
      return 'interface {}';
    case 'map':
      return 'map[string]interface {}';
    case 'slice':
      return '[]interface {}';
    default:
      return type;
  }
}

function idealConstant(arg: Extract<Arg, { type: 'number' }>): unknown {
  if (arg.floatSyntax || !arg.isInt) return arg.value;
  return new GoInt(arg.value, T.int);
}

function describeArg(arg: Arg | undefined): string {
  if (!arg) return '';
  switch (arg.type) {
    case 'string':
      return JSON.stringify(arg.value);
    case 'number':
      return arg.text;
    case 'bool':
      return String(arg.value);
    case 'dot':
      return '.';
    case 'nil':
      return 'nil';
    case 'field':
      return '.' + arg.ident.join('.');
    case 'variable':
      return arg.ident.join('.');
    case 'identifier':
      return arg.name;
    default:
      return arg.type;
  }
}

const NOT_A_FIELD = Symbol('not a field');

/** A method of a value, bound to it, or undefined. */
function methodOf(receiver: unknown, name: string): ((...args: unknown[]) => unknown) | undefined {
  if (receiver instanceof GoEnum && name === 'String') return () => receiver.name;
  if (receiver instanceof GoStringer && name === 'String') return () => receiver.toString();
  let struct: StructType | undefined;
  if (receiver instanceof GoStruct) struct = receiver.struct;
  else if (receiver instanceof GoNil) struct = receiver.type.struct;
  const method = struct?.methods?.[name];
  if (method) return (...args: unknown[]) => method(receiver as GoStruct | GoNil, ...args);
  return undefined;
}

/** A struct's field by Go name: its value, or NOT_A_FIELD. Open structs also map unknown names to JSON keys. */
export function readField(s: GoStruct, name: string): unknown {
  const field = s.struct.fields.find((f) => f.go === name);
  if (field) return fromJSON(s.data[field.json], field.type);
  if (!s.struct.open) return NOT_A_FIELD;
  const key = jsonKeyFor(name, s.data);
  if (key === undefined) return NOT_A_FIELD;
  return openValue(s.data[key]);
}

/** An open struct's unknown member: objects stay open structs, numbers are ints as in the orchestrator's types. */
function openValue(raw: unknown): unknown {
  if (raw === undefined) return undefined;
  if (Array.isArray(raw)) return raw.map(openValue);
  if (typeof raw === 'object' && raw !== null) return new GoStruct(OPEN_STRUCT, raw as Record<string, unknown>);
  if (typeof raw === 'number' && Number.isInteger(raw)) return new GoInt(raw, T.int32);
  return dynamicFromJSON(raw);
}

export const OPEN_STRUCT = T.struct({ name: 'struct', fields: [], open: true });

/** The JSON key a Go field name stands for: the same name with its leading capitals lowered. */
function jsonKeyFor(goName: string, data: Readonly<Record<string, unknown>>): string | undefined {
  if (goName in data && /^[a-z]/.test(goName)) return goName;
  const lower = goName.toLowerCase();
  const keys = Object.keys(data).filter((k) => k.toLowerCase() === lower && /^[a-z]/.test(k));
  return keys.sort(compareStrings)[0];
}

setFieldReader((s, name) => {
  const v = readField(s, name);
  return v === NOT_A_FIELD ? undefined : v;
});
