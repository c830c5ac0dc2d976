import { stringify } from 'yaml';
import { MessageLevel } from './catalogue';
import { AnalysisMessage, documentationUrl } from './message';

/** `-o json|yaml`: a list of {code, level, origin, reference?, message, documentationUrl}. */
export function structuredMessages(messages: readonly AnalysisMessage[]): object[] {
  return messages.map((m) => ({
    code: m.code,
    level: m.level,
    origin: m.resource,
    ...(m.origin ? { reference: m.origin.line ? `${m.origin.file}:${m.origin.line}` : m.origin.file } : {}),
    message: m.text,
    documentationUrl: documentationUrl(m),
  }));
}

export function formatJson(messages: readonly AnalysisMessage[]): string {
  return `${JSON.stringify(structuredMessages(messages), null, '\t')}\n`;
}

export function formatYaml(messages: readonly AnalysisMessage[]): string {
  return messages.length === 0 ? '[]\n' : stringify(structuredMessages(messages), { lineWidth: 0 });
}

const COLORS: Record<MessageLevel, string> = { Error: '\x1b[1;31m', Warning: '\x1b[33m', Info: '\x1b[36m' };
const RESET = '\x1b[0m';

/** `Error [MSH0101] (VirtualService ns/name file:line) message`, the level colored on a terminal. */
export function formatLog(messages: readonly AnalysisMessage[], color: boolean): string {
  return messages
    .map((m) => {
      const level = color ? `${COLORS[m.level]}${m.level}${RESET}` : m.level;
      const where = m.origin ? ` ${m.origin.file}${m.origin.line ? `:${m.origin.line}` : ''}` : '';
      return `${level} [${m.code}] (${m.resource}${where}) ${m.text}\n`;
    })
    .join('');
}
