import type { Command } from '@oclif/core';

/**
 * Contribution point: extra commands for a program's command tree. Classes are declared
 * with @command like the built-in ones; the program runner asks for all contributions.
 */
export interface CommandContribution {
  commands(): Command.Class[];
}

export const CommandContribution = Symbol.for('mesh.CommandContribution');
