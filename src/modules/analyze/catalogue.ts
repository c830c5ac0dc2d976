import { readFileSync } from 'node:fs';
import * as path from 'node:path';
import { parse } from 'yaml';

export type MessageLevel = 'Info' | 'Warning' | 'Error';
export const LEVELS: readonly MessageLevel[] = ['Info', 'Warning', 'Error'];

/** One entry of the message catalogue: what a code means and how its text is written. */
export interface MessageType {
  code: string;
  name: string;
  level: MessageLevel;
  description: string;
  template: string;
}

/** The catalogue ships as YAML next to the sources (the reference's catalogue, renamed). */
const CATALOGUE_FILE = path.resolve(__dirname, '..', '..', '..', '..', 'src', 'modules', 'analyze', 'messages.yaml');

/** The message catalogue, by code and by name. */
export class MessageCatalogue {
  private readonly byCode = new Map<string, MessageType>();
  private readonly byName = new Map<string, MessageType>();

  constructor(entries: readonly MessageType[]) {
    for (const e of entries) {
      if (!/^MSH\d{4}$/.test(e.code) || !LEVELS.includes(e.level)) throw new Error(`message catalogue: bad entry ${JSON.stringify(e)}`);
      this.byCode.set(e.code, e);
      this.byName.set(e.name, e);
    }
  }

  static load(file = CATALOGUE_FILE): MessageCatalogue {
    return new MessageCatalogue(parse(readFileSync(file, 'utf8')) as MessageType[]);
  }

  named(name: string): MessageType {
    const t = this.byName.get(name);
    if (!t) throw new Error(`message catalogue has no message named ${name}`);
    return t;
  }

  code(code: string): MessageType | undefined {
    return this.byCode.get(code);
  }

  all(): MessageType[] {
    return [...this.byCode.values()];
  }
}

/** Go's fmt verbs the templates use: %s, %v, %d, %q (quoted). */
export function formatTemplate(template: string, args: readonly unknown[]): string {
  let i = 0;
  return template.replace(/%([svdq%])/g, (_m, verb: string) => {
    if (verb === '%') return '%';
    const arg = args[i++];
    if (verb === 'q') return JSON.stringify(String(arg));
    return Array.isArray(arg) ? `[${arg.join(' ')}]` : String(arg);
  });
}
