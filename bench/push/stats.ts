/** Distributions and the printed table. */

export interface Distribution {
  n: number;
  min: number;
  median: number;
  p90: number;
  p99: number;
  max: number;
  mean: number;
}

/** Nearest-rank percentiles of `values` (which it sorts). */
export function distribution(values: number[]): Distribution {
  const v = [...values].sort((a, b) => a - b);
  const n = v.length;
  if (n === 0) return { n: 0, min: NaN, median: NaN, p90: NaN, p99: NaN, max: NaN, mean: NaN };
  const at = (q: number) => v[Math.min(n - 1, Math.max(0, Math.ceil(q * n) - 1))];
  return { n, min: v[0], median: at(0.5), p90: at(0.9), p99: at(0.99), max: v[n - 1], mean: v.reduce((a, b) => a + b, 0) / n };
}

export function ms(x: number | undefined): string {
  if (x === undefined || Number.isNaN(x)) return '-';
  return x >= 10_000 ? `${(x / 1000).toFixed(1)} s` : x >= 100 ? `${Math.round(x)} ms` : `${x.toFixed(1)} ms`;
}

export function bytes(x: number | undefined): string {
  if (x === undefined || Number.isNaN(x)) return '-';
  const units = ['B', 'KiB', 'MiB', 'GiB'];
  let u = 0;
  while (x >= 1024 && u < units.length - 1) {
    x /= 1024;
    u += 1;
  }
  return `${x.toFixed(u === 0 ? 0 : x >= 100 ? 0 : 1)} ${units[u]}`;
}

export function count(x: number): string {
  return x.toLocaleString('en-US');
}

/** A two-column (or more) aligned table with a title. */
export function table(title: string, rows: Array<[string, ...string[]]>): string {
  const widths: number[] = [];
  for (const r of rows) r.forEach((cell, i) => (widths[i] = Math.max(widths[i] ?? 0, cell.length)));
  const lines = rows.map((r) => r.map((cell, i) => (i === 0 ? cell.padEnd(widths[i]) : cell.padStart(widths[i]))).join('  ').trimEnd());
  const width = Math.max(title.length, ...lines.map((l) => l.length));
  return [title, '-'.repeat(width), ...lines].join('\n');
}
