import 'reflect-metadata';
import { Command } from '@oclif/core';
import { Program } from '../settings/types';
import { GLOBAL_FLAGS } from './global-flags';

export interface CommandOptions {
  program: Program;
  /** Words after the program name; '' is the program's root command. */
  path: string;
  /** Alternative names: a last word (`c`) or a full path with spaces (`experimental ps`). */
  aliases?: string[];
  /** Alternative full paths of one word, elsewhere in the tree (`authz` for `experimental authz`). */
  topLevelAliases?: string[];
  summary: string;
  description?: string;
  usage?: string;
  /** Flags beyond the program's global ones. */
  flags?: Command.Class['flags'];
  args?: Command.Class['args'];
  /** Accept any number of positional arguments. */
  variadic?: boolean;
  hidden?: boolean;
  /** A group command: run alone it prints its help; unknown subcommands are errors. */
  group?: boolean;
}

export interface CommandMetadata extends Required<Pick<CommandOptions, 'program' | 'path' | 'summary'>> {
  aliases: string[];
  group: boolean;
  hidden: boolean;
}

const COMMAND_METADATA = Symbol.for('mesh.command');

/**
 * Declares an oclif command class as a command of one program. The program's command map
 * is generated from the classes carrying this metadata (see command-tree.ts).
 */
export function command(options: CommandOptions) {
  return <T extends Command.Class>(target: T): T => {
    const aliases = [
      ...(options.aliases ?? []).map((a) => (a.includes(' ') ? a : replaceLastWord(options.path, a))),
      ...(options.topLevelAliases ?? []),
    ];
    const meta: CommandMetadata = {
      program: options.program,
      path: options.path,
      summary: options.summary,
      aliases,
      group: options.group ?? false,
      hidden: options.hidden ?? false,
    };
    Reflect.defineMetadata(COMMAND_METADATA, meta, target);
    const cls = target as unknown as Record<string, unknown>;
    cls.summary = options.summary;
    // oclif prints summary and description both; only set one when there is more to say.
    if (options.description) cls.description = options.description;
    cls.hidden = meta.hidden;
    if (options.usage) cls.usage = options.usage;
    // The program's global flags, then what the class inherits (shared flag sets live on
    // base classes), then its own.
    cls.flags = { ...GLOBAL_FLAGS[options.program], ...((target as Command.Class).flags ?? {}), ...(options.flags ?? {}) };
    if (options.args) cls.args = options.args;
    if (options.variadic || options.group) cls.strict = false;
    return target;
  };
}

export function commandMetadata(target: unknown): CommandMetadata | undefined {
  if (typeof target !== 'function') return undefined;
  return Reflect.getOwnMetadata(COMMAND_METADATA, target);
}

function replaceLastWord(path: string, word: string): string {
  const words = path.split(' ').filter(Boolean);
  words[words.length - 1] = word;
  return words.join(' ');
}

/** The @command classes among modules' exports, for a program's commands/index.ts. */
export function commandsOf(...modules: Record<string, unknown>[]): Command.Class[] {
  return modules.flatMap((m) => Object.values(m)).filter((v): v is Command.Class => commandMetadata(v) !== undefined);
}
