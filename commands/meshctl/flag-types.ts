import { Flags } from '@oclif/core';
import { stringFlag } from '../../src/modules/cli';

/** `--output`/`-o` restricted to the formats a command can print. */
export function outputFormatFlag(formats: string[], defaultFormat?: string) {
  // oclif lists the accepted formats itself.
  return stringFlag('output format', { char: 'o', options: formats, default: defaultFormat });
}

const SEVERITIES = ['Info', 'Warning', 'Error'] as const;
export type Severity = (typeof SEVERITIES)[number];

/**
 * A message severity (the spec's Level type of `analyze` and `precheck`). Taken in any
 * letter case, kept in its canonical spelling.
 */
export function severityFlag(description: string, defaultSeverity: Severity) {
  return Flags.custom<Severity>({
    description,
    default: defaultSeverity,
    helpValue: SEVERITIES.join('|'),
    parse: async (input: string) => {
      const match = SEVERITIES.find((s) => s.toLowerCase() === input.toLowerCase());
      if (!match) throw new Error(`expected one of ${SEVERITIES.join(', ')}, got ${JSON.stringify(input)}`);
      return match;
    },
  })();
}
