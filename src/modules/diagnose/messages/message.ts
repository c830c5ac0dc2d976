/**
 * Diagnostic messages as `meshctl analyze` and `x precheck` report them: a type from the
 * catalogue (code, name, level, template), the resource it is about, and its text.
 */
import { stringify } from 'yaml';

export const LEVELS = ['Info', 'Warning', 'Error'] as const;
export type Level = (typeof LEVELS)[number];

export interface MessageType {
  /** `MSH` and four digits. */
  code: string;
  name: string;
  level: Level;
  /** A Go format string: `%s`, `%v` and `%d` insert a parameter, `%q` a quoted one. */
  template: string;
}

export interface Message {
  type: MessageType;
  /** What the message is about: `Cluster`, `Pod default/web`... or nothing. */
  origin?: string;
  text: string;
}

/** `level` or worse (Error is worse than Warning, Warning than Info). */
export function atLeast(level: Level, threshold: Level): boolean {
  return LEVELS.indexOf(level) >= LEVELS.indexOf(threshold);
}

/** The template filled with the parameters, Go's way for the verbs the catalogue uses. */
export function formatTemplate(template: string, params: readonly unknown[]): string {
  let i = 0;
  return template.replace(/%([svdq%])/g, (_, verb: string) => {
    if (verb === '%') return '%';
    const value = params[i++];
    const text = Array.isArray(value) ? `[${value.join(' ')}]` : String(value);
    return verb === 'q' ? JSON.stringify(text) : text;
  });
}

export function message(type: MessageType, origin: string | undefined, ...params: unknown[]): Message {
  return { type, origin, text: formatTemplate(type.template, params) };
}

/** Errors first, then warnings, then information; within a level by code, origin and text; duplicates dropped. */
export function sortedUnique(messages: readonly Message[]): Message[] {
  const rank = (m: Message) => LEVELS.length - LEVELS.indexOf(m.type.level);
  const cmp = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);
  const sorted = [...messages].sort((a, b) => rank(a) - rank(b) || cmp(a.type.code, b.type.code) || cmp(a.origin ?? '', b.origin ?? '') || cmp(a.text, b.text));
  return sorted.filter((m, i) => i === 0 || render(m) !== render(sorted[i - 1]));
}

/** `Error [MSH0141] (Cluster) Missing required permission ...`, coloured by level on a terminal. */
export function render(m: Message, color = false): string {
  const colors: Record<Level, string> = { Info: '', Warning: '\x1b[33m', Error: '\x1b[1;31m' };
  const level = color && colors[m.type.level] ? `${colors[m.type.level]}${m.type.level}\x1b[0m` : m.type.level;
  return `${level} [${m.type.code}]${m.origin ? ` (${m.origin})` : ''} ${m.text}`;
}

/** The messages as data: what `-o json` and `-o yaml` print. */
function asData(messages: readonly Message[]): object[] {
  return messages.map((m) => ({ code: m.type.code, level: m.type.level, message: m.text, ...(m.origin ? { origin: m.origin } : {}) }));
}

export type MessageFormat = 'log' | 'json' | 'yaml';

/** The messages in `format`; log lines end without a newline, as joined lines. */
export function formatMessages(messages: readonly Message[], format: MessageFormat, color = false): string {
  switch (format) {
    case 'json':
      return JSON.stringify(asData(messages), null, '\t');
    case 'yaml':
      return stringify(asData(messages)).replace(/\n$/, '');
    default:
      return messages.map((m) => render(m, color)).join('\n');
  }
}
