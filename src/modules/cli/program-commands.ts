import * as path from 'node:path';
import { Command } from '@oclif/core';
import { packageRoot } from '../build-info';
import { Program } from '../settings/types';
import { CommandFactory } from './command-injection';
import { CommandTree } from './command-tree';

/** Loads a program's built-in command classes (commands/<program>/index). */
export function builtInCommands(program: Program): Command.Class[] {
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const mod = require(path.join(packageRoot(), 'dist', 'commands', program, 'index.js')) as { COMMANDS: Command.Class[] };
  return mod.COMMANDS;
}

/** The program's full command tree: built-in commands plus those enabled plugins contribute. */
export function programTree(program: Program, commands: Pick<CommandFactory, 'contributedCommands'>): CommandTree {
  return new CommandTree(program, [...builtInCommands(program), ...commands.contributedCommands()]);
}
