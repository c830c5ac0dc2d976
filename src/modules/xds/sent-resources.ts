/**
 * What one stream was sent of one type: name → body, for thousands of names and thousands of
 * streams at once.
 *
 * A Map per stream costs about 48 bytes per entry; at 2,000 proxies with 2,400 clusters and
 * 2,400 load assignments each that is half a gigabyte. Proxies of one mesh mostly hold the
 * same names in the same order, so the names and their positions live in a shared index and
 * a stream keeps only an array of bodies (8 bytes per entry), plus a small map of the names
 * outside its index. `settle()` moves those in when they become many.
 */
interface NameIndex {
  readonly names: readonly string[];
  readonly positions: ReadonlyMap<string, number>;
}

const EMPTY_INDEX: NameIndex = { names: [], positions: new Map() };
const indexes = new Map<string, WeakRef<NameIndex>>();
const forgetIndex = new FinalizationRegistry<string>((key) => {
  if (indexes.get(key)?.deref() === undefined) indexes.delete(key);
});

/** Runs' names joined, once per run (runs are shared by many streams; see concatRuns). */
const runKeys = new WeakMap<readonly { name: string }[], string>();

/**
 * The shared index of exactly these resources' names in this order; with the runs they are
 * made of, its key is found from the runs.
 */
function nameIndex(resources: readonly { name: string }[], runs?: readonly (readonly { name: string }[])[]): NameIndex {
  if (resources.length === 0) return EMPTY_INDEX;
  const key = runs ? runs.filter((run) => run.length > 0).map(runKey).join('\n') : resources.map((r) => r.name).join('\n');
  const known = indexes.get(key)?.deref();
  if (known) return known;
  const names = resources.map((r) => r.name);
  const index: NameIndex = { names, positions: new Map(names.map((n, i) => [n, i])) };
  indexes.set(key, new WeakRef(index));
  forgetIndex.register(index, key);
  return index;
}

function runKey(run: readonly { name: string }[]): string {
  let key = runKeys.get(run);
  if (key === undefined) runKeys.set(run, (key = run.map((r) => r.name).join('\n')));
  return key;
}

/** Per shared name index and key function: positions by key (see `namesWith`). */
const keyIndexes = new WeakMap<NameIndex, WeakMap<(name: string) => string | undefined, Map<string, number[]>>>();

/** Names outside the index beyond which `settle()` rebuilds it (and the share of the total). */
const SETTLE_MIN_EXTRA = 16;
const SETTLE_SHARE = 0.1;

export class SentResources implements Iterable<[string, Buffer]> {
  private index: NameIndex = EMPTY_INDEX;
  /** Parallel to `index.names`; undefined where that name is not held. */
  private bodies: (Buffer | undefined)[] = [];
  private held = 0;
  private extra: Map<string, Buffer> | undefined;

  get size(): number {
    return this.held + (this.extra?.size ?? 0);
  }

  get(name: string): Buffer | undefined {
    const at = this.index.positions.get(name);
    return at !== undefined ? this.bodies[at] : this.extra?.get(name);
  }

  /**
   * `get(name)` for the `position`th resource of a list: lists mostly come in the index's own
   * order, and then no map is read at all.
   */
  getAt(position: number, name: string): Buffer | undefined {
    return this.index.names[position] === name ? this.bodies[position] : this.get(name);
  }

  has(name: string): boolean {
    return this.get(name) !== undefined;
  }

  set(name: string, body: Buffer): void {
    const at = this.index.positions.get(name);
    if (at === undefined) {
      (this.extra ??= new Map()).set(name, body);
      return;
    }
    if (this.bodies[at] === undefined) this.held += 1;
    this.bodies[at] = body;
  }

  delete(name: string): boolean {
    const at = this.index.positions.get(name);
    if (at === undefined) return this.extra?.delete(name) ?? false;
    if (this.bodies[at] === undefined) return false;
    this.bodies[at] = undefined;
    this.held -= 1;
    return true;
  }

  /**
   * Holds exactly `resources` from now on (a state-of-the-world response, or a stream's first).
   * With the shared runs they are made of, the name index is found from the runs.
   */
  replace(resources: readonly { name: string; body: Buffer }[], runs?: readonly (readonly { name: string }[])[]): void {
    const names = this.index.names;
    const sameNames = names.length === resources.length && resources.every((r, i) => r.name === names[i]);
    if (!sameNames) this.index = nameIndex(resources, runs);
    this.bodies = resources.map((r) => r.body);
    this.held = resources.length;
    this.extra = undefined;
  }

  /** After a batch of changes: folds the names outside the index in when they are many. */
  settle(): void {
    const extra = this.extra?.size ?? 0;
    if (extra === 0) {
      this.extra = undefined;
      return;
    }
    if (extra >= SETTLE_MIN_EXTRA && extra >= this.size * SETTLE_SHARE) this.replace([...this].map(([name, body]) => ({ name, body })));
  }

  /**
   * The names held whose `keyOf` is `key` (the clusters of one host, say): read from an index
   * built once per shared name index and `keyOf`, so a push that concerns one host does not
   * visit every name every proxy holds.
   */
  namesWith(keyOf: (name: string) => string | undefined, key: string): string[] {
    let byFn = keyIndexes.get(this.index);
    if (!byFn) keyIndexes.set(this.index, (byFn = new WeakMap()));
    let index = byFn.get(keyOf);
    if (!index) {
      index = new Map();
      this.index.names.forEach((name, at) => {
        const k = keyOf(name);
        if (k === undefined) return;
        const list = index!.get(k);
        if (list) list.push(at);
        else index!.set(k, [at]);
      });
      byFn.set(keyOf, index);
    }
    const out: string[] = [];
    for (const at of index.get(key) ?? []) if (this.bodies[at] !== undefined) out.push(this.index.names[at]);
    if (this.extra) for (const name of this.extra.keys()) if (keyOf(name) === key) out.push(name);
    return out;
  }

  *keys(): IterableIterator<string> {
    for (const [name] of this) yield name;
  }

  *[Symbol.iterator](): IterableIterator<[string, Buffer]> {
    const { names } = this.index;
    const bodies = this.bodies;
    for (let i = 0; i < names.length; i++) {
      const body = bodies[i];
      if (body !== undefined) yield [names[i], body];
    }
    if (this.extra) yield* this.extra;
  }

  entries(): IterableIterator<[string, Buffer]> {
    return this[Symbol.iterator]();
  }
}
