import { matchesAny } from './glob';

/** A gathered log and how it ranks: logs with critical errors first, then by error count. */
export interface RankedLog {
  /** Its path in the archive. */
  path: string;
  critical: number;
  errors: number;
}

/** A line that reports an error: an `error` level or word (ignoring case). */
const ERROR_LINE = /\berror\b/i;

/**
 * Keeps the lines of a log fetched with timestamps that were written up to `until`, without
 * their timestamp (the real server prefixes `2024-01-02T03:04:05.123456789Z `).
 */
export function linesUntil(text: string, until: Date): string {
  const out: string[] = [];
  for (const line of text.split('\n')) {
    if (line === '') continue;
    const space = line.indexOf(' ');
    const at = space > 0 ? Date.parse(line.slice(0, space)) : NaN;
    if (Number.isNaN(at)) {
      out.push(line); // a continuation or a server without timestamps: kept as is
      continue;
    }
    if (at > until.getTime()) break;
    out.push(line.slice(space + 1));
  }
  return out.length ? `${out.join('\n')}\n` : '';
}

/** Counts the error lines of `text`: those matching an `--ignore-errs` glob are not counted; those matching `--critical-errs` are critical. */
export function rankLog(path: string, text: string, critical: readonly RegExp[], ignore: readonly RegExp[]): RankedLog {
  let errors = 0;
  let crit = 0;
  for (const line of text.split('\n')) {
    if (!ERROR_LINE.test(line) || matchesAny(ignore, line)) continue;
    errors++;
    if (matchesAny(critical, line)) crit++;
  }
  return { path, critical: crit, errors };
}

/** Highest priority first: more critical errors, then more errors, then by path. */
export function byPriority(a: RankedLog, b: RankedLog): number {
  return b.critical - a.critical || b.errors - a.errors || (a.path < b.path ? -1 : a.path > b.path ? 1 : 0);
}
