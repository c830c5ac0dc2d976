import { bashCompletion } from './bash';
import { fishCompletion } from './fish';
import { CompletionModel } from './model';
import { powershellCompletion } from './powershell';
import { zshCompletion } from './zsh';

export type Shell = 'bash' | 'fish' | 'powershell' | 'zsh';

export interface CompletionOptions {
  /** Show each candidate's summary (zsh, fish, powershell); `--no-descriptions` turns it off. */
  descriptions: boolean;
}

const GENERATORS: Record<Shell, (model: CompletionModel, options: CompletionOptions) => string> = {
  bash: bashCompletion,
  fish: fishCompletion,
  powershell: powershellCompletion,
  zsh: zshCompletion,
};

/** The static completion script of one program for one shell. */
export function generateCompletion(shell: Shell, model: CompletionModel, options: CompletionOptions): string {
  return GENERATORS[shell](model, options);
}

export { completionModel, CompletionModel, CompletionCommand, CompletionFlag } from './model';
