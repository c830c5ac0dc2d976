/** Errors a command reports to its user: one line on stderr and an exit code. */
export class CommandError extends Error {
  constructor(
    message: string,
    readonly exitCode = 1,
  ) {
    super(message);
    this.name = 'CommandError';
  }
}

/** A command whose capability belongs to a later piece of work: exit code 2, never a silent success. */
export class NotImplementedError extends CommandError {
  constructor(readonly commandLine: string) {
    super(`${commandLine}: not implemented yet`, 2);
    this.name = 'NotImplementedError';
  }
}
