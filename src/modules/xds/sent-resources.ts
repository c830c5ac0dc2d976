import { createHash } from 'node:crypto';
import { WeakValueMap } from '../shared/weak-value-map';

/**
 * What one stream was sent of one type: name → body, for thousands of names and thousands of
 * streams at once.
 *
 * A Map per stream costs about 48 bytes per entry; at 2,000 proxies with 2,400 clusters and
 * 2,400 load assignments each that is half a gigabyte. Proxies of one mesh mostly hold the
 * same names in the same order, so the names and their positions live in a shared index, plus
 * a small map per stream of the names outside its index (`settle()` moves those in when they
 * become many).
 *
 * The bodies by position are shared too where they can be. A stream's first response is made
 * of runs whole scopes share (see concatRuns), and the stream holds those runs' bodies, not a
 * copy of them: an array of 8 bytes per entry and stream was still 80 MB at 2,000 proxies, all
 * of it for the garbage collector to scan. What later pushes change is kept beside them, by
 * position, until it is enough to be worth an array of the stream's own.
 */
interface NameIndex {
  readonly names: readonly string[];
  readonly positions: ReadonlyMap<string, number>;
}

const EMPTY_INDEX: NameIndex = { names: [], positions: new Map() };
/** Shared indexes by their names joined (`flat`), or by the ids of the runs they are made of (`byRuns`). */
const indexes = { flat: new WeakValueMap<string, NameIndex>(), byRuns: new WeakValueMap<string, NameIndex>() };

/**
 * The shared index of exactly these resources' names in this order; with the runs they are
 * made of, its key is found from the runs (a few numbers, not the names of every resource).
 */
function nameIndex(resources: readonly { name: string }[], runs?: readonly (readonly { name: string }[])[]): NameIndex {
  if (resources.length === 0) return EMPTY_INDEX;
  const table = runs ? indexes.byRuns : indexes.flat;
  const key = runs ? runs.filter((run) => run.length > 0).map(runNamesId).join(',') : resources.map((r) => r.name).join('\n');
  const known = table.get(key);
  if (known) return known;
  const names = resources.map((r) => r.name);
  const index: NameIndex = { names, positions: new Map(names.map((n, i) => [n, i])) };
  table.set(key, index);
  return index;
}

/**
 * A number per distinct list of names, once per run (runs are shared by many streams; see
 * concatRuns): runs with the same names, such as two proxies' inbound clusters on the same
 * ports, get the same number, so their streams share an index. The most recent lists are
 * remembered; a list forgotten and seen again gets a new number (an index less shared).
 */
const runNameIds = new WeakMap<readonly { name: string }[], number>();
const idsOfNames = new Map<string, number>();
const MAX_NAME_LISTS = 4096;
let nextNamesId = 0;

function runNamesId(run: readonly { name: string }[]): number {
  let id = runNameIds.get(run);
  if (id === undefined) {
    // Remembered by digest: a list of thousands of names is a string of a hundred kilobytes.
    const digest = createHash('sha256').update(run.map((r) => r.name).join('\n')).digest('base64');
    id = idsOfNames.get(digest);
    if (id === undefined) {
      if (idsOfNames.size >= MAX_NAME_LISTS) idsOfNames.delete(idsOfNames.keys().next().value!);
      idsOfNames.set(digest, (id = nextNamesId++));
    }
    runNameIds.set(run, id);
  }
  return id;
}

/** Per shared name index and key function: positions by key (see `namesWith`). */
const keyIndexes = new WeakMap<NameIndex, WeakMap<(name: string) => string | undefined, Map<string, number[]>>>();

/** Names outside the index beyond which `settle()` rebuilds it (and the share of the total). */
const SETTLE_MIN_EXTRA = 16;
const SETTLE_SHARE = 0.1;

/** A run's bodies in order, once per run (runs are frozen and shared; see concatRuns). */
const runBodies = new WeakMap<readonly { body: Buffer }[], readonly Buffer[]>();

function bodiesOf(run: readonly { body: Buffer }[]): readonly Buffer[] {
  let bodies = runBodies.get(run);
  if (!bodies) runBodies.set(run, (bodies = Object.freeze(run.map((r) => r.body))));
  return bodies;
}

/** Changes by position beyond which a stream copies the shared bodies into its own array (and their share of the total). */
const OWN_ARRAY_MIN_CHANGES = 32;
const OWN_ARRAY_SHARE = 0.125;

export class SentResources implements Iterable<[string, Buffer]> {
  private index: NameIndex = EMPTY_INDEX;
  /**
   * The bodies parallel to `index.names` (undefined where that name is not held), as pieces:
   * each starts at the matching entry of `starts`. Shared pieces are read only; `owned` says the
   * one piece is this stream's own array, written in place.
   */
  private pieces: readonly (readonly (Buffer | undefined)[])[] = [];
  private starts: readonly number[] = [];
  private owned = false;
  /** Bodies by position that differ from the shared pieces (undefined: no longer held). */
  private changes: Map<number, Buffer | undefined> | undefined;
  private held = 0;
  private extra: Map<string, Buffer> | undefined;

  get size(): number {
    return this.held + (this.extra?.size ?? 0);
  }

  get(name: string): Buffer | undefined {
    const at = this.index.positions.get(name);
    return at !== undefined ? this.bodyAt(at) : this.extra?.get(name);
  }

  /**
   * `get(name)` for the `position`th resource of a list: lists mostly come in the index's own
   * order, and then no map is read at all.
   */
  getAt(position: number, name: string): Buffer | undefined {
    return this.index.names[position] === name ? this.bodyAt(position) : this.get(name);
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
    if (this.bodyAt(at) === undefined) this.held += 1;
    this.write(at, body);
  }

  delete(name: string): boolean {
    const at = this.index.positions.get(name);
    if (at === undefined) return this.extra?.delete(name) ?? false;
    if (this.bodyAt(at) === undefined) return false;
    this.write(at, undefined);
    this.held -= 1;
    return true;
  }

  /**
   * Holds exactly `resources` from now on (a state-of-the-world response, or a stream's first).
   * With the shared runs they are made of, the name index is found from the runs, and the
   * bodies are the runs' own (shared, not copied).
   */
  replace(resources: readonly { name: string; body: Buffer }[], runs?: readonly (readonly { name: string; body: Buffer }[])[]): void {
    const names = this.index.names;
    const sameNames = names.length === resources.length && resources.every((r, i) => r.name === names[i]);
    if (!sameNames) this.index = nameIndex(resources, runs);
    if (runs) {
      const pieces: (readonly Buffer[])[] = [];
      const starts: number[] = [];
      let at = 0;
      for (const run of runs) {
        if (run.length === 0) continue;
        pieces.push(bodiesOf(run));
        starts.push(at);
        at += run.length;
      }
      this.pieces = pieces;
      this.starts = starts;
      this.owned = false;
    } else {
      this.pieces = [resources.map((r) => r.body)];
      this.starts = [0];
      this.owned = true;
    }
    this.changes = undefined;
    this.held = resources.length;
    this.extra = undefined;
  }

  private bodyAt(at: number): Buffer | undefined {
    const { changes, pieces, starts } = this;
    if (changes !== undefined && changes.has(at)) return changes.get(at);
    if (pieces.length === 1) return pieces[0][at];
    for (let p = pieces.length - 1; p >= 0; p--) if (at >= starts[p]) return pieces[p][at - starts[p]];
    return undefined;
  }

  private write(at: number, body: Buffer | undefined): void {
    if (this.owned) {
      (this.pieces[0] as (Buffer | undefined)[])[at] = body;
      return;
    }
    const changes = (this.changes ??= new Map());
    changes.set(at, body);
    if (changes.size >= OWN_ARRAY_MIN_CHANGES && changes.size >= this.index.names.length * OWN_ARRAY_SHARE) this.ownBodies();
  }

  /** Copies the shared bodies and the changes into an array of this stream's own. */
  private ownBodies(): void {
    const own = new Array<Buffer | undefined>(this.index.names.length);
    for (let i = 0; i < own.length; i++) own[i] = this.bodyAt(i);
    this.pieces = [own];
    this.starts = [0];
    this.owned = true;
    this.changes = undefined;
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
    for (const at of index.get(key) ?? []) if (this.bodyAt(at) !== undefined) out.push(this.index.names[at]);
    if (this.extra) for (const name of this.extra.keys()) if (keyOf(name) === key) out.push(name);
    return out;
  }

  *keys(): IterableIterator<string> {
    for (const [name] of this) yield name;
  }

  *[Symbol.iterator](): IterableIterator<[string, Buffer]> {
    const { names } = this.index;
    for (let i = 0; i < names.length; i++) {
      const body = this.bodyAt(i);
      if (body !== undefined) yield [names[i], body];
    }
    if (this.extra) yield* this.extra;
  }

  entries(): IterableIterator<[string, Buffer]> {
    return this[Symbol.iterator]();
  }
}
