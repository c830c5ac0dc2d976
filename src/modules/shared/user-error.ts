/**
 * A problem the user can fix (a bad flag, setting, file or plugin), as opposed to a bug. It
 * carries its exit code; the program runner prints its message as one line on stderr and exits
 * with that code, so no command keeps its own list of error classes.
 */
export class UserError extends Error {
  constructor(
    message: string,
    readonly exitCode = 1,
  ) {
    super(message);
    this.name = new.target.name;
  }
}
