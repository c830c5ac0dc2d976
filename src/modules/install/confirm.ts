import * as readline from 'node:readline';
import { UserError } from '../shared/user-error';

/**
 * Asks `question` on the terminal and resolves whether the answer was yes. Without a terminal
 * on stdin there is no one to ask: that is an error naming -y, not a silent yes or a hang.
 */
export async function confirm(question: string, input: NodeJS.ReadStream = process.stdin, output: NodeJS.WritableStream = process.stderr): Promise<boolean> {
  if (!input.isTTY) throw new UserError('cannot ask for confirmation: stdin is not a terminal; pass -y (--skip-confirmation) to proceed');
  const rl = readline.createInterface({ input, output });
  try {
    const answer = await new Promise<string>((resolve) => rl.question(`${question} [y/N] `, resolve));
    return /^y(es)?$/i.test(answer.trim());
  } finally {
    rl.close();
  }
}
