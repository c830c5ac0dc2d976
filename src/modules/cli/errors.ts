import { UserError } from '../shared/user-error';

/** Errors a command reports to its user: one line on stderr and an exit code. */
export class CommandError extends UserError {}

/** A command whose capability belongs to a later piece of work: exit code 2, never a silent success. */
export class NotImplementedError extends CommandError {
  constructor(readonly commandLine: string) {
    super(`${commandLine}: not implemented yet`, 2);
  }
}
