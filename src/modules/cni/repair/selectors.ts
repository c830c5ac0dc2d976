import { labelValueProblem, qualifiedNameProblem } from './names';
import { UserError } from '../../shared/user-error';

/*
 * Parsers for the orchestrator API's two selector languages, so the repair controller can
 * reject a malformed REPAIR_FIELD_SELECTORS / REPAIR_LABEL_SELECTORS at start instead of
 * having every list and watch refused. The grammar is the API server's.
 */

export class SelectorError extends UserError {
  constructor(message: string) {
    super(message);
  }
}

export type FieldOperator = '=' | '==' | '!=';

export interface FieldRequirement {
  readonly field: string;
  readonly operator: FieldOperator;
  /** Unescaped. */
  readonly value: string;
}

/** The fields the API server accepts in pod field selectors. */
export const POD_SELECTABLE_FIELDS: readonly string[] = [
  'metadata.name',
  'metadata.namespace',
  'spec.nodeName',
  'spec.restartPolicy',
  'spec.schedulerName',
  'spec.serviceAccountName',
  'spec.hostNetwork',
  'status.phase',
  'status.podIP',
  'status.podIPs',
  'status.nominatedNodeName',
];

/**
 * `field=value,field!=value,...` (`==` is `=`; comma is AND). In values, `\,`, `\=` and `\\`
 * stand for the character itself. Empty terms are skipped, as the API server does.
 */
export function parseFieldSelector(text: string): FieldRequirement[] {
  const out: FieldRequirement[] = [];
  for (const term of splitUnescaped(text, ',')) {
    if (term === '') continue;
    const op = findFieldOperator(term);
    if (!op) throw new SelectorError(`term ${JSON.stringify(term)} has no operator (=, == or !=)`);
    const field = term.slice(0, op.at);
    if (field === '') throw new SelectorError(`term ${JSON.stringify(term)} has no field name`);
    out.push({ field, operator: op.operator, value: unescapeFieldValue(term.slice(op.at + op.operator.length), term) });
  }
  return out;
}

/** Also checks the field names against those the API server accepts for pods. */
export function parsePodFieldSelector(text: string): FieldRequirement[] {
  const requirements = parseFieldSelector(text);
  for (const r of requirements) {
    if (!POD_SELECTABLE_FIELDS.includes(r.field)) {
      throw new SelectorError(`field ${JSON.stringify(r.field)} cannot select pods (supported: ${POD_SELECTABLE_FIELDS.join(', ')})`);
    }
  }
  return requirements;
}

/** Escapes a value for use in a field selector term. */
export function escapeFieldValue(value: string): string {
  return value.replace(/[\\,=]/g, (c) => '\\' + c);
}

function splitUnescaped(text: string, separator: string): string[] {
  const parts: string[] = [];
  let current = '';
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (c === '\\' && i + 1 < text.length) {
      current += c + text[++i];
    } else if (c === separator) {
      parts.push(current);
      current = '';
    } else {
      current += c;
    }
  }
  parts.push(current);
  return parts;
}

function findFieldOperator(term: string): { at: number; operator: FieldOperator } | undefined {
  for (let i = 0; i < term.length; i++) {
    if (term[i] === '\\') {
      i++;
      continue;
    }
    if (term.startsWith('!=', i)) return { at: i, operator: '!=' };
    if (term.startsWith('==', i)) return { at: i, operator: '==' };
    if (term[i] === '=') return { at: i, operator: '=' };
  }
  return undefined;
}

function unescapeFieldValue(value: string, term: string): string {
  let out = '';
  for (let i = 0; i < value.length; i++) {
    const c = value[i];
    if (c !== '\\') {
      out += c;
      continue;
    }
    const next = value[++i];
    if (next !== '\\' && next !== ',' && next !== '=') {
      throw new SelectorError(`term ${JSON.stringify(term)} has an invalid escape sequence (only \\\\, \\, and \\= are allowed)`);
    }
    out += next;
  }
  return out;
}

export type LabelOperator = '=' | '!=' | 'in' | 'notin' | 'exists' | '!' | '>' | '<';

export interface LabelRequirement {
  readonly key: string;
  readonly operator: LabelOperator;
  /** One value for = and !=, the set for in and notin, the integer for > and <, none otherwise. */
  readonly values: readonly string[];
}

type Token =
  | { kind: 'ident'; text: string }
  | { kind: '!' | '=' | '==' | '!=' | '(' | ')' | ',' | '>' | '<' | 'end'; text: string };

/**
 * `key=value`, `key==value`, `key!=value`, `key in (a,b)`, `key notin (a,b)`, `key`, `!key`,
 * `key>1`, `key<1`; comma is AND. Keys must be qualified names and values label values.
 */
export function parseLabelSelector(text: string): LabelRequirement[] {
  const tokens = tokenize(text);
  let pos = 0;
  const peek = () => tokens[pos];
  const next = () => tokens[pos++];
  const out: LabelRequirement[] = [];
  if (peek().kind === 'end') return out;
  for (;;) {
    out.push(requirement());
    const t = next();
    if (t.kind === 'end') return out;
    if (t.kind !== ',') throw new SelectorError(`expected "," or the end after a requirement, found ${describe(t)}`);
  }

  function requirement(): LabelRequirement {
    let t = next();
    if (t.kind === '!') {
      const key = expectKey(next());
      return { key, operator: '!', values: [] };
    }
    const key = expectKey(t);
    t = peek();
    if (t.kind === ',' || t.kind === 'end') return { key, operator: 'exists', values: [] };
    next();
    if (t.kind === '=' || t.kind === '==' || t.kind === '!=') {
      const v = peek();
      // `key=` selects the empty value.
      const value = v.kind === 'ident' ? (next(), v.text) : v.kind === ',' || v.kind === 'end' ? '' : badValue(v);
      return { key, operator: t.kind === '!=' ? '!=' : '=', values: [checkValue(value)] };
    }
    if (t.kind === 'ident' && (t.text === 'in' || t.text === 'notin')) {
      return { key, operator: t.text, values: valueSet(t.text) };
    }
    if (t.kind === '>' || t.kind === '<') {
      const v = next();
      if (v.kind !== 'ident' || !/^-?\d+$/.test(v.text)) {
        throw new SelectorError(`"${t.kind}" on ${JSON.stringify(key)} needs an integer, found ${describe(v)}`);
      }
      return { key, operator: t.kind, values: [v.text] };
    }
    throw new SelectorError(`expected an operator (=, ==, !=, in, notin, >, <) after ${JSON.stringify(key)}, found ${describe(t)}`);
  }

  function valueSet(op: string): string[] {
    const open = next();
    if (open.kind !== '(') throw new SelectorError(`"${op}" needs a parenthesised list of values, found ${describe(open)}`);
    const values: string[] = [];
    for (;;) {
      const v = next();
      if (v.kind === ')' && values.length === 0) throw new SelectorError(`"${op}" needs at least one value`);
      if (v.kind !== 'ident') throw new SelectorError(`expected a value in the "${op}" list, found ${describe(v)}`);
      values.push(checkValue(v.text));
      const sep = next();
      if (sep.kind === ')') return values;
      if (sep.kind !== ',') throw new SelectorError(`expected "," or ")" in the "${op}" list, found ${describe(sep)}`);
    }
  }
}

function expectKey(t: Token): string {
  if (t.kind !== 'ident') throw new SelectorError(`expected a label key, found ${describe(t)}`);
  const problem = qualifiedNameProblem(t.text);
  if (problem) throw new SelectorError(`label key ${JSON.stringify(t.text)} is invalid: ${problem}`);
  return t.text;
}

function checkValue(value: string): string {
  const problem = labelValueProblem(value);
  if (problem) throw new SelectorError(`label value ${JSON.stringify(value)} is invalid: ${problem}`);
  return value;
}

function badValue(t: Token): never {
  throw new SelectorError(`expected a label value, found ${describe(t)}`);
}

function describe(t: Token): string {
  return t.kind === 'end' ? 'the end of the selector' : JSON.stringify(t.text);
}

const SPECIALS = new Set(['!', '=', '(', ')', ',', '>', '<']);

function tokenize(text: string): Token[] {
  const tokens: Token[] = [];
  let i = 0;
  while (i < text.length) {
    const c = text[i];
    if (/\s/.test(c)) {
      i++;
    } else if (text.startsWith('==', i) || text.startsWith('!=', i)) {
      tokens.push({ kind: text.slice(i, i + 2) as '==' | '!=', text: text.slice(i, i + 2) });
      i += 2;
    } else if (SPECIALS.has(c)) {
      tokens.push({ kind: c as '!' | '=' | '(' | ')' | ',' | '>' | '<', text: c });
      i++;
    } else {
      let j = i;
      while (j < text.length && !SPECIALS.has(text[j]) && !/\s/.test(text[j])) j++;
      tokens.push({ kind: 'ident', text: text.slice(i, j) });
      i = j;
    }
  }
  tokens.push({ kind: 'end', text: '' });
  return tokens;
}
