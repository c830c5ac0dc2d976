import { formatData } from '../proxy-dump';
import { UserError } from '../shared/user-error';

export type ZtunnelOutput = 'short' | 'json' | 'yaml';

/**
 * `-o short` prints the table, `-o json|yaml` the selected entries as parsed. Data too deeply
 * nested to print (a hostile dump) is a one-line error, not a crash.
 */
export function renderOutput(output: ZtunnelOutput, table: () => string, data: () => unknown): string {
  if (output === 'short') return table();
  try {
    return formatData(data(), output);
  } catch (err) {
    if (err instanceof RangeError) throw new UserError(`cannot print the config dump as ${output}: it is nested too deeply`);
    throw err;
  }
}
