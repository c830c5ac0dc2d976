/**
 * Column-aligned text as the reference's tab writer lays it out: each column left-aligned, as
 * wide as its widest cell plus `gap` blanks; the last column is not padded.
 */
export function alignColumns(rows: readonly (readonly string[])[], gap: number): string {
  const widths: number[] = [];
  for (const row of rows) row.forEach((cell, i) => (widths[i] = Math.max(widths[i] ?? 0, cell.length)));
  return rows.map((row) => row.map((cell, i) => (i === row.length - 1 ? cell : cell.padEnd(widths[i] + gap))).join('')).join('\n') + '\n';
}

/** The gap of the tables (`cluster`, `routes`, `secret`...). */
export const TABLE_GAP = 5;
