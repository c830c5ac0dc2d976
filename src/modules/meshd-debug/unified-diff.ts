/**
 * A line diff in unified format, as the incumbent prints `proxy-status <pod>` differences
 * (Python difflib's layout, which its Go port keeps): `--- <from>` / `+++ <to>`, hunks
 * `@@ -<start>,<count> +<start>,<count> @@` with `context` unchanged lines around changes.
 * The matching lines come from Myers' shortest edit script, after common head and tail.
 */

type Tag = 'equal' | 'replace' | 'delete' | 'insert';
type OpCode = [Tag, number, number, number, number];

/** Above this many edits the middle is shown as one replacement (a diff of unrelated texts). */
const MAX_EDITS = 2000;

/** Lines keeping their ends, the last one given one (difflib.SplitLines). */
export function splitLines(text: string): string[] {
  const lines = text.split(/(?<=\n)/);
  // As Go's strings.SplitAfter: a text ending in a newline ends with an empty line.
  if (text.endsWith('\n')) lines.push('');
  lines[lines.length - 1] += '\n';
  return lines;
}

/** The unified diff of `a` and `b` (lines with their ends); '' when they are equal. */
export function unifiedDiff(a: readonly string[], b: readonly string[], fromFile: string, toFile: string, context: number): string {
  const out: string[] = [];
  for (const group of groupedOpCodes(opCodes(a, b), context)) {
    if (out.length === 0) out.push(`--- ${fromFile}\n`, `+++ ${toFile}\n`);
    const first = group[0];
    const last = group[group.length - 1];
    out.push(`@@ -${range(first[1], last[2])} +${range(first[3], last[4])} @@\n`);
    for (const [tag, i1, i2, j1, j2] of group) {
      if (tag === 'equal') {
        for (const line of a.slice(i1, i2)) out.push(` ${line}`);
        continue;
      }
      if (tag === 'replace' || tag === 'delete') for (const line of a.slice(i1, i2)) out.push(`-${line}`);
      if (tag === 'replace' || tag === 'insert') for (const line of b.slice(j1, j2)) out.push(`+${line}`);
    }
  }
  return out.join('');
}

function range(start: number, stop: number): string {
  let beginning = start + 1;
  const length = stop - start;
  if (length === 1) return `${beginning}`;
  if (length === 0) beginning -= 1;
  return `${beginning},${length}`;
}

/** Hunks: changes with `n` lines of context, split where more than 2n lines are unchanged. */
function groupedOpCodes(codes: OpCode[], n: number): OpCode[][] {
  if (codes.length === 0) codes = [['equal', 0, 1, 0, 1]];
  if (codes[0][0] === 'equal') {
    const [tag, i1, i2, j1, j2] = codes[0];
    codes[0] = [tag, Math.max(i1, i2 - n), i2, Math.max(j1, j2 - n), j2];
  }
  if (codes[codes.length - 1][0] === 'equal') {
    const [tag, i1, i2, j1, j2] = codes[codes.length - 1];
    codes[codes.length - 1] = [tag, i1, Math.min(i2, i1 + n), j1, Math.min(j2, j1 + n)];
  }
  const groups: OpCode[][] = [];
  let group: OpCode[] = [];
  for (const code of codes) {
    let [tag, i1, i2, j1, j2] = code;
    if (tag === 'equal' && i2 - i1 > 2 * n) {
      group.push([tag, i1, Math.min(i2, i1 + n), j1, Math.min(j2, j1 + n)]);
      groups.push(group);
      group = [];
      i1 = Math.max(i1, i2 - n);
      j1 = Math.max(j1, j2 - n);
    }
    group.push([tag, i1, i2, j1, j2]);
  }
  if (group.length > 0 && !(group.length === 1 && group[0][0] === 'equal')) groups.push(group);
  return groups;
}

/** Equal, replaced, deleted and inserted ranges covering both texts, in order. */
function opCodes(a: readonly string[], b: readonly string[]): OpCode[] {
  let head = 0;
  while (head < a.length && head < b.length && a[head] === b[head]) head++;
  let tail = 0;
  while (tail < a.length - head && tail < b.length - head && a[a.length - 1 - tail] === b[b.length - 1 - tail]) tail++;
  const matches: Array<[number, number]> = [];
  for (let i = 0; i < head; i++) matches.push([i, i]);
  const middle = shortestEditMatches(a.slice(head, a.length - tail), b.slice(head, b.length - tail)) ?? [];
  for (const [i, j] of middle) matches.push([i + head, j + head]);
  for (let t = tail; t > 0; t--) matches.push([a.length - t, b.length - t]);

  const codes: OpCode[] = [];
  let i = 0;
  let j = 0;
  for (let m = 0; m < matches.length; ) {
    const [mi, mj] = matches[m];
    if (mi > i || mj > j) codes.push([mi > i && mj > j ? 'replace' : mi > i ? 'delete' : 'insert', i, mi, j, mj]);
    // A run of consecutive matches is one equal range.
    let run = 1;
    while (m + run < matches.length && matches[m + run][0] === mi + run && matches[m + run][1] === mj + run) run++;
    codes.push(['equal', mi, mi + run, mj, mj + run]);
    i = mi + run;
    j = mj + run;
    m += run;
  }
  if (i < a.length || j < b.length) codes.push([i < a.length && j < b.length ? 'replace' : i < a.length ? 'delete' : 'insert', i, a.length, j, b.length]);
  return codes;
}

/** Matching line pairs of a shortest edit script (Myers); undefined beyond MAX_EDITS edits. */
function shortestEditMatches(a: readonly string[], b: readonly string[]): Array<[number, number]> | undefined {
  const n = a.length;
  const m = b.length;
  if (n === 0 || m === 0) return [];
  const limit = Math.min(n + m, MAX_EDITS);
  const at = (k: number) => k + limit + 1;
  const v = new Int32Array(2 * limit + 3);
  // trace[d]: v for k in [-(d+1), d+1] as it was before round d.
  const trace: Int32Array[] = [];
  for (let d = 0; d <= limit; d++) {
    trace.push(v.slice(at(-(d + 1)), at(d + 1) + 1));
    for (let k = -d; k <= d; k += 2) {
      let x = k === -d || (k !== d && v[at(k - 1)] < v[at(k + 1)]) ? v[at(k + 1)] : v[at(k - 1)] + 1;
      let y = x - k;
      while (x < n && y < m && a[x] === b[y]) {
        x++;
        y++;
      }
      v[at(k)] = x;
      if (x >= n && y >= m) return backtrack(trace, d, n, m);
    }
  }
  return undefined;
}

function backtrack(trace: Int32Array[], edits: number, n: number, m: number): Array<[number, number]> {
  const pairs: Array<[number, number]> = [];
  let x = n;
  let y = m;
  for (let d = edits; d > 0; d--) {
    const before = trace[d];
    const get = (k: number) => before[k + d + 1];
    const k = x - y;
    const prevK = k === -d || (k !== d && get(k - 1) < get(k + 1)) ? k + 1 : k - 1;
    const prevX = get(prevK);
    const prevY = prevX - prevK;
    while (x > prevX && y > prevY) {
      pairs.push([x - 1, y - 1]);
      x--;
      y--;
    }
    x = prevX;
    y = prevY;
  }
  while (x > 0 && y > 0) {
    pairs.push([x - 1, y - 1]);
    x--;
    y--;
  }
  return pairs.reverse();
}
