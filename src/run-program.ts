import * as fs from 'node:fs';
import * as path from 'node:path';
import { Command, Config } from '@oclif/core';

/*
 * The program runner: composes the container (src/container.ts), finds the command the
 * arguments name, builds it through the container and runs it. The one place errors become
 * exit codes.
 */
import { createContainer, MeshContainer } from './container';
import { packageRoot } from './modules/build-info';
import { UserError } from './modules/shared/user-error';
import { Environment, processEnvironment } from './modules/settings/environment';
import { Program } from './modules/settings/types';
import { normalizeBooleanFlags, valueFlagSpellings, wantsHelp } from './modules/cli/argv';
import { CommandNode, CommandTree } from './modules/cli/command-tree';
import { GLOBAL_FLAGS } from './modules/cli/global-flags';
import { MeshCommand } from './modules/cli/mesh-command';
import { createHelp } from './modules/cli/help';
import { handCommandMapToOclif } from './modules/cli/oclif-bridge';
import { programTree } from './modules/cli/program-commands';

export interface RunOptions {
  env?: Environment;
  cwd?: string;
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
    if (err instanceof UserError) return report(err.message, err.exitCode);
    throw err;
  }
  try {
    const tree = programTree(program, mesh.commands);
    const { node, argv: rest } = tree.resolve(argv, valueFlagSpellings(GLOBAL_FLAGS[program] as Command.Class['flags']));
    if (!node) return report(`unknown command "${argv.find((a) => !a.startsWith('-')) ?? ''}" for "${program}"`, 1);
    const config = await loadOclifConfig(program, tree);
    if (wantsHelp(rest)) {
      await showHelp(config, node);
      return 0;
    }
    const cmd = mesh.commands.create<MeshCommand>(node.cls, normalizeBooleanFlags(rest, node.cls.flags), config, tree);
    cmd.id = node.id;
    await cmd.execute();
    return 0;
  } catch (err) {
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

/** The one place errors become exit codes: a UserError carries its own; oclif's exits keep theirs; anything else is 1. */
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

function report(message: string, code: number): number {
  if (code !== 0 && message && !message.startsWith('EEXIT')) process.stderr.write(`Error: ${message}\n`);
  return code;
}
