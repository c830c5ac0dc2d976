import { Command, Interfaces } from '@oclif/core';
import type { Container } from 'inversify';
import { commandMetadata, CommandMetadata } from './command-decorator';
import { CommandError, NotImplementedError } from './errors';
import { Logging, LoggingToken } from '../logging/logging';
import { LoggingFlagValues, LoggingOptionError, parseLoggingOptions } from '../logging/options';

const CONTAINER = Symbol.for('mesh.cli.container');

/** Hands the run's container to the commands oclif instantiates (they only get the config). */
export function attachContainer(config: Interfaces.Config, container: Container): void {
  (config as unknown as Record<symbol, Container>)[CONTAINER] = container;
}

/**
 * Base of every command. Errors are thrown, never printed here: the program runner prints
 * them as one line on stderr with the right exit code.
 */
export abstract class MeshCommand extends Command {
  protected get container(): Container {
    const c = (this.config as unknown as Record<symbol, Container | undefined>)[CONTAINER];
    if (!c) throw new Error('command run outside a mesh program (no container attached)');
    return c;
  }

  protected get meta(): CommandMetadata {
    const meta = commandMetadata(this.constructor);
    if (!meta) throw new Error(`${this.constructor.name} is not declared with @command`);
    return meta;
  }

  /** `<program> <command path>`, as users type it. */
  protected get commandLine(): string {
    return [this.meta.program, this.meta.path].filter(Boolean).join(' ');
  }

  protected notImplemented(): never {
    throw new NotImplementedError(this.commandLine);
  }

  protected fail(message: string, exitCode = 1): never {
    throw new CommandError(message, exitCode);
  }

  /** Writes text to stdout as is (oclif's log adds formatting we do not want). */
  protected write(text: string): void {
    process.stdout.write(text.endsWith('\n') ? text : text + '\n');
  }

  /** Applies the logging flags, where the command has them, before it runs. */
  override async init(): Promise<void> {
    await super.init();
    const flags = (this.constructor as Command.Class).flags ?? {};
    if (!('log_output_level' in flags) && !('vklog' in flags)) return;
    const { flags: values } = await this.parse(this.constructor as Command.Class);
    let options;
    try {
      options = parseLoggingOptions(this.meta.program, values as LoggingFlagValues);
    } catch (err) {
      if (err instanceof LoggingOptionError) this.fail(err.message);
      throw err;
    }
    try {
      this.container.get<Logging>(LoggingToken).configure(options);
    } catch (err) {
      this.fail((err as Error).message);
    }
  }

  /** Runs the command through oclif's lifecycle (init, run, catch, finally). */
  execute(): Promise<unknown> {
    return this._run();
  }

  override async catch(err: Error & { exitCode?: number }): Promise<never> {
    throw err;
  }
}

/** A command whose capability comes with a later issue: parses its flags, then says so. */
export abstract class NotYetImplementedCommand extends MeshCommand {
  async run(): Promise<void> {
    await this.parse(this.constructor as Command.Class);
    this.notImplemented();
  }
}
