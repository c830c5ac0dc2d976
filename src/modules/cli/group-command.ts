import { Command } from '@oclif/core';
import { createHelp } from './help';
import { MeshCommand } from './mesh-command';

/**
 * A command that only groups others (cobra style): run alone it prints its help; a word
 * that names no subcommand is an error.
 */
export abstract class GroupCommand extends MeshCommand {
  async run(): Promise<void> {
    const { argv } = await this.parse(this.constructor as Command.Class);
    if (argv.length > 0) {
      this.fail(`unknown command "${String(argv[0])}" for "${this.commandLine}"`);
    }
    const help = await createHelp(this.config);
    await help.showHelp(this.meta.path === '' ? [] : this.meta.path.split(' '));
  }
}
