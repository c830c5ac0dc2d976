import { Command, Config } from '@oclif/core';
import { inject, injectable } from 'inversify';
import { commandMetadata, CommandMetadata } from './command-decorator';
import { CommandArgv, OclifConfig } from './command-injection';
import { CommandScope } from './command-scope';
import { CommandError } from './errors';
import { Logging, LoggingToken } from '../logging/logging';
import { LoggingFlagValues, LoggingOptionError, parseLoggingOptions } from '../logging/options';

/**
 * Base of every command. Commands are built by the container, so a command declares what it
 * uses as injected properties (`@inject(SettingsToken) private readonly settings!: Settings`).
 * Errors are thrown, never printed here: the program runner prints them as one line on
 * stderr with the right exit code.
 */
@injectable()
export abstract class MeshCommand extends Command {
  @inject(LoggingToken) protected readonly logging!: Logging;
  /** Resolves the service a command runs with its parsed flags bound (the daemon, the agent...). */
  @inject(CommandScope) protected readonly scope!: CommandScope;

  constructor(@inject(CommandArgv) argv: string[], @inject(OclifConfig) config: Config) {
    super(argv, config);
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
      this.logging.configure(options);
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
