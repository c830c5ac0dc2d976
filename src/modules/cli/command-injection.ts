import type { Command, Config } from '@oclif/core';
import type { CommandTree } from './command-tree';

/**
 * Commands are built by the container (src/container.ts) so they receive their services by
 * injection: the runner binds what oclif would pass to the constructor, plus the program's
 * command tree, in a scope of their own.
 */
export const CommandArgv = Symbol.for('mesh.cli.CommandArgv');
export const OclifConfig = Symbol.for('mesh.cli.OclifConfig');
export const CommandTreeToken = Symbol.for('mesh.cli.CommandTree');

/** What the program runner needs from the container: the contributed commands, and a way to build one. */
export interface CommandFactory {
  /** Commands enabled plugins contribute (CommandContribution), in order. */
  contributedCommands(): Command.Class[];
  /** An instance of `cls` with its injected services, for `argv` and `config`. */
  create<T>(cls: Command.Class, argv: string[], config: Config, tree: CommandTree): T;
}

