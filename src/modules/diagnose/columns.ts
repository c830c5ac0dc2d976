/**
 * Text columns laid out as Go's tabwriter lays out tab-terminated cells, which the incumbent's
 * tables use: each column as wide as its widest cell plus `padding` (at least `minWidth`), the
 * text left-aligned or right-aligned in it; a last cell without a tab is written as it is.
 */
export interface ColumnOptions {
  minWidth: number;
  padding: number;
  alignRight?: boolean;
  /** Whether the last cell of each row is a column too (its row ended with a tab). */
  lastIsColumn?: boolean;
}

export function columns(rows: readonly (readonly string[])[], options: ColumnOptions): string {
  const width = (s: string) => [...s].length;
  const count = Math.max(0, ...rows.map((r) => r.length));
  const padded = options.lastIsColumn ? count : count - 1;
  const widths: number[] = [];
  for (let i = 0; i < padded; i++) widths.push(Math.max(options.minWidth, ...rows.map((r) => width(r[i] ?? '') + options.padding)));
  return rows
    .map((row) =>
      row
        .map((cell, i) => {
          if (i >= padded) return cell;
          const fill = ' '.repeat(widths[i] - width(cell));
          return options.alignRight ? fill + cell : cell + fill;
        })
        .join(''),
    )
    .map((line) => line + '\n')
    .join('');
}
