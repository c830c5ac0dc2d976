import { UserError } from '../../shared/user-error';

/** A bootstrap the agent cannot write: the message names the flag, setting or file at fault. */
export class BootstrapError extends UserError {}
