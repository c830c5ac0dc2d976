import { stringify } from 'yaml';
import type { ScopeInfo } from '../ctrlz/scope-info';

export type ScopeOutputFormat = 'short' | 'json' | 'yaml';

/** A row of `admin log` output, with the incumbent's field names. */
export interface ScopeLevelRow {
  scope_name: string;
  log_level: string;
  stack_trace_level: string;
  description: string;
}

export function scopeRows(scopes: readonly ScopeInfo[]): ScopeLevelRow[] {
  return [...scopes]
    .sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0))
    .map((s) => ({ scope_name: s.name, log_level: s.output_level, stack_trace_level: s.stack_trace_level, description: s.description ?? '' }));
}

/** The incumbent's table: its four headings, columns 3 blanks apart, the last one not padded. */
export function scopeTable(rows: readonly ScopeLevelRow[]): string {
  const header = ['ACTIVE SCOPE', 'DESCRIPTION', 'LOG LEVEL', 'STACK TRACE LEVEL'];
  const cells = [header, ...rows.map((r) => [r.scope_name, r.description, r.log_level, r.stack_trace_level])];
  const widths = header.map((_, i) => Math.max(...cells.map((c) => c[i].length)));
  return cells.map((c) => c.map((cell, i) => (i === c.length - 1 ? cell : cell.padEnd(widths[i] + 3))).join('')).join('\n') + '\n';
}

/**
 * The output of `admin log` for the daemons asked, in order. One daemon: its rows as the
 * incumbent prints them. Several: short tables each under the pod's name, and for json/yaml
 * one object keyed by `<pod>.<namespace>`.
 */
export function renderScopeLevels(perPod: ReadonlyArray<{ pod: string; rows: ScopeLevelRow[] }>, format: ScopeOutputFormat): string {
  if (format === 'short') {
    if (perPod.length === 1) return scopeTable(perPod[0].rows);
    return perPod.map((p) => `${p.pod}:\n${scopeTable(p.rows)}`).join('\n');
  }
  const value = perPod.length === 1 ? perPod[0].rows : Object.fromEntries(perPod.map((p) => [p.pod, p.rows]));
  return format === 'json' ? `${JSON.stringify(value, null, 2)}\n` : stringify(value);
}
