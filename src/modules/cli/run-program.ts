import * as fs from 'node:fs';
import * as path from 'node:path';
import { Command, Config } from '@oclif/core';
import type { Container } from 'inversify';
import { createContainer, MeshContainer } from '../../container';
import { packageRoot } from '../build-info';
import { PluginLoadError } from '../plugins/loader';
import { Environment, processEnvironment } from '../settings/environment';
import { SettingValueError } from '../settings/parse';
import { Program } from '../settings/types';
import { normalizeBooleanFlags, valueFlagSpellings, wantsHelp } from './argv';
import { CommandContribution } from './contributions';
import { CommandNode, CommandTree } from './command-tree';
import { NotImplementedError } from './errors';
import { UserError } from '../shared/user-error';
import { GLOBAL_FLAGS } from './global-flags';
import { attachContainer, MeshCommand } from './mesh-command';
import { createHelp } from './help';
import { handCommandMapToOclif } from './oclif-bridge';

export interface RunOptions {
  env?: Environment;
  cwd?: string;
}

/** Loads a program's built-in command classes (commands/<program>/index). */
export function builtInCommands(program: Program): Command.Class[] {
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const mod = require(path.join(packageRoot(), 'dist', 'commands', program, 'index.js')) as { COMMANDS: Command.Class[] };
  return mod.COMMANDS;
}

/** The program's full command tree: built-in commands plus those enabled plugins contribute. */
export function programTree(program: Program, container: Container): CommandTree {
  const contributed = container.isBound(CommandContribution)
    ? container.getAll<CommandContribution>(CommandContribution).flatMap((c) => c.commands())
    : [];
  return new CommandTree(program, [...builtInCommands(program), ...contributed]);
}

/**
 * Runs one program: settings and plugins first (a bad value or plugin stops it with exit
 * code 1), then the command the arguments name. Returns the exit code.
 */
export async function runProgram(program: Program, argv: string[], options: RunOptions = {}): Promise<number> {
  const env = options.env ?? processEnvironment();
  let mesh: MeshContainer;
  try {
    mesh = createContainer({ program, env, cwd: options.cwd ?? process.cwd() });
  } catch (err) {
    if (err instanceof SettingValueError || err instanceof PluginLoadError) return report(err.message, 1);
    throw err;
  }
  try {
    const tree = programTree(program, mesh.container);
    const { node, argv: rest } = tree.resolve(argv, valueFlagSpellings(GLOBAL_FLAGS[program] as Command.Class['flags']));
    if (!node) return report(`unknown command "${argv.find((a) => !a.startsWith('-')) ?? ''}" for "${program}"`, 1);
    const config = await loadOclifConfig(program, tree);
    attachContainer(config, mesh.container);
    if (wantsHelp(rest)) {
      await showHelp(config, node);
      return 0;
    }
    const cmd = new (node.cls as unknown as new (argv: string[], config: Config) => MeshCommand)(
      normalizeBooleanFlags(rest, node.cls.flags),
      config,
    );
    cmd.id = node.id;
    await cmd.execute();
    return 0;
  } catch (err) {
    // `<program> <command>: not implemented yet` is the whole line users see.
    if (err instanceof NotImplementedError) return report(err.message, err.exitCode, '');
    return report(errorMessage(err), exitCodeOf(err));
  }
}

async function showHelp(config: Config, node: CommandNode): Promise<void> {
  const help = await createHelp(config);
  if (node.path === '' && !node.meta.group) await help.showCommandHelp(config.findCommand(node.id)!, config.topics);
  else await help.showHelp(node.path === '' ? [] : node.path.split(' '));
}

async function loadOclifConfig(program: Program, tree: CommandTree): Promise<Config> {
  handCommandMapToOclif(tree.commandMap());
  const root = packageRoot();
  const pjson = JSON.parse(fs.readFileSync(path.join(root, 'package.json'), 'utf8'));
  pjson.description = tree.root?.meta.summary ?? pjson.description;
  pjson.oclif = {
    bin: program,
    dirname: program,
    topicSeparator: ' ',
    // Aliases show in a command's own help, not as extra rows in listings.
    helpOptions: { hideAliasesFromRoot: true },
    commands: {
      strategy: 'explicit',
      target: path.join(root, 'dist', 'src', 'modules', 'cli', 'oclif-bridge.js'),
      identifier: 'COMMANDS',
    },
  };
  return Config.load({ root, pjson, isRoot: true, name: program });
}

function exitCodeOf(err: unknown): number {
  if (err instanceof UserError) return err.exitCode;
  const oclifExit = (err as { oclif?: { exit?: number } })?.oclif?.exit;
  if (typeof oclifExit === 'number' && (err as Error).message?.startsWith('EEXIT')) return oclifExit;
  return 1;
}

function errorMessage(err: unknown): string {
  if (err instanceof UserError) return err.message;
  const e = err as Error;
  // oclif parse errors carry a hint line ("See more help with --help"); keep what names the problem.
  return String(e?.message ?? err)
    .split('\n')
    .filter((l) => l.trim() !== '' && !/See more help with/.test(l))
    .join('; ');
}

function report(message: string, code: number, prefix = 'Error: '): number {
  if (code !== 0 && message && !message.startsWith('EEXIT')) process.stderr.write(`${prefix}${message}\n`);
  return code;
}
