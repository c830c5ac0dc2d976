import { UserError } from '../shared/user-error';

export interface ConfirmOptions {
  input?: NodeJS.ReadableStream & { isTTY?: boolean };
  output?: NodeJS.WritableStream;
  /**
   * Without a terminal on stdin there is no one to ask: refuse with an error naming -y (a
   * change as big as an install), rather than read a closed or piped stdin as the answer.
   */
  requireTerminal?: boolean;
}

/**
 * Asks a yes/no question and reads one answer line; only `y` or `yes` proceeds. A closed or
 * empty stdin answers no, so a script never proceeds by accident.
 */
export function confirm(question: string, options: ConfirmOptions = {}): Promise<boolean> {
  const input = options.input ?? process.stdin;
  const output = options.output ?? process.stdout;
  if (options.requireTerminal && !input.isTTY) {
    return Promise.reject(new UserError('cannot ask for confirmation: stdin is not a terminal; pass -y (--skip-confirmation) to proceed'));
  }
  output.write(`${question} `);
  return new Promise((resolve) => {
    let buffered = '';
    const finish = (answer: string) => {
      input.removeListener('data', onData);
      input.removeListener('end', onEnd);
      input.removeListener('error', onEnd);
      (input as NodeJS.ReadStream).pause?.();
      resolve(/^\s*y(es)?\s*$/i.test(answer));
    };
    const onData = (chunk: Buffer | string) => {
      buffered += chunk.toString();
      const newline = buffered.indexOf('\n');
      if (newline >= 0) finish(buffered.slice(0, newline));
      else if (buffered.length > 1024) finish('');
    };
    const onEnd = () => finish(buffered);
    input.on('data', onData);
    input.on('end', onEnd);
    input.on('error', onEnd);
    (input as NodeJS.ReadStream).resume?.();
  });
}
