import { CompletionModel } from './model';

export type Shell = 'bash' | 'fish' | 'powershell' | 'zsh';

export interface CompletionOptions {
  descriptions: boolean;
}

export function generateCompletion(shell: Shell, model: CompletionModel, options: CompletionOptions): string {
  throw new Error(`completion for ${shell} of ${model.program} (${options.descriptions}) is being written`);
}

export { completionModel, CompletionModel, CompletionCommand, CompletionFlag } from './model';
