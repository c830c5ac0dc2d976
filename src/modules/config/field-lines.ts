/** Lookups that scan the text before an index is built: one per reported issue is the usual. */
const SCANS_BEFORE_INDEX = 16;

/**
 * The line of each field of one parsed document, by the path validation names it with
 * (`spec.http[0].route`). Kept as one text (`\n<path>\t<line>` per field), not an object with a
 * key per field: a document of a file at the size limit has ~160k fields, and the daemon's parse
 * worker hands them to the main thread, which copies one string in a moment but spends ~0.25 s
 * rebuilding an object of 160k keys, with its event loop blocked. Lookups are few (one per
 * reported issue): the first ones scan the text, many build an index once.
 */
export class FieldLines {
  private index: Map<string, number> | undefined;
  private scans = 0;

  constructor(readonly encoded: string) {}

  static build(record: (note: (path: string, line: number) => void) => void): FieldLines {
    const parts: string[] = [];
    record((path, line) => {
      // A key with a line break or tab could not be told apart from the separators; such a field gets the document's line.
      if (!/[\n\t]/.test(path)) parts.push(`\n${path}\t${line}`);
    });
    return new FieldLines(parts.join(''));
  }

  lineOf(field: string): number | undefined {
    if (this.index) return this.index.get(field);
    if (++this.scans > SCANS_BEFORE_INDEX) return this.buildIndex().get(field);
    const entry = `\n${field}\t`;
    const at = this.encoded.indexOf(entry);
    if (at < 0) return undefined;
    const from = at + entry.length;
    const end = this.encoded.indexOf('\n', from);
    return Number(this.encoded.slice(from, end < 0 ? undefined : end));
  }

  private buildIndex(): Map<string, number> {
    const index = new Map<string, number>();
    for (const entry of this.encoded.split('\n')) {
      const tab = entry.lastIndexOf('\t');
      // The first of a path's entries wins, as the scan finds it.
      if (tab > 0 && !index.has(entry.slice(0, tab))) index.set(entry.slice(0, tab), Number(entry.slice(tab + 1)));
    }
    this.index = index;
    return index;
  }
}
