import { UserError } from '../shared/user-error';

/** Errors a command reports to its user: one line on stderr and an exit code. */
export class CommandError extends UserError {}
