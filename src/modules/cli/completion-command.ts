import { Command } from '@oclif/core';
import { Program } from '../settings/types';
import { command } from './command-decorator';
import { boolFlag } from './flags';
import { MeshCommand } from './mesh-command';
import { generateCompletion, Shell } from './completion';
import { completionModel } from './completion/model';
import { GroupCommand } from './group-command';
import { inject } from 'inversify';
import { CommandTreeToken } from './command-injection';
import type { CommandTree } from './command-tree';

export const SHELLS: readonly Shell[] = ['bash', 'fish', 'powershell', 'zsh'];

/** `completion`: a group; run alone it prints its help listing the shells. */
export abstract class CompletionGroupCommand extends GroupCommand {}

/** `completion <shell>`: prints the script generated from this program's command tree. */
export abstract class CompletionShellCommand extends MeshCommand {
  static override flags = { 'no-descriptions': boolFlag('disable completion descriptions') };

  protected abstract readonly shell: Shell;
  @inject(CommandTreeToken) private readonly tree!: CommandTree;

  async run(): Promise<void> {
    const { flags } = await this.parse(this.constructor as Command.Class);
    const script = generateCompletion(this.shell, completionModel(this.tree), { descriptions: !flags['no-descriptions'] });
    process.stdout.write(script);
  }
}

/** The `completion` group and one command per shell, for one program. */
export function completionCommands(program: Program): Command.Class[] {
  const group = command({ program, path: 'completion', group: true, summary: 'Generate the autocompletion script for the specified shell' })(
    class Completion extends CompletionGroupCommand {},
  );
  const perShell = SHELLS.map((shell) =>
    command({ program, path: `completion ${shell}`, summary: `Generate the autocompletion script for ${shell}` })(
      class extends CompletionShellCommand {
        protected readonly shell = shell;
      },
    ),
  );
  return [group, ...perShell];
}
