import { table } from '../../cli/table';
import type { WebhookAnalysis } from './webhook-analysis';

const INJECTED = '✔';
const NOT_INJECTED = '✘';

/** The incumbent's table: WEBHOOK, REVISION, INJECTED (✔ or ✘, green or red on a terminal), REASON. */
export function webhookTable(results: readonly WebhookAnalysis[], color: boolean): string {
  const text = table(
    ['WEBHOOK', 'REVISION', 'INJECTED', 'REASON'],
    results.map((r) => [r.webhook, r.revision, r.injected ? INJECTED : NOT_INJECTED, r.reason]),
  );
  if (!color) return text + '\n';
  // Colour after padding, so the escape codes do not count as width.
  const lines = text.split('\n');
  return (
    lines
      .map((line, i) => {
        if (i === 0) return line;
        const mark = results[i - 1].injected ? INJECTED : NOT_INJECTED;
        const code = results[i - 1].injected ? '\x1b[32m' : '\x1b[31m';
        const at = line.indexOf(mark, (results[i - 1].webhook + results[i - 1].revision).length);
        return at < 0 ? line : `${line.slice(0, at)}${code}${mark}\x1b[0m${line.slice(at + 1)}`;
      })
      .join('\n') + '\n'
  );
}
