/*
 * The object store: every object of every resource type in Maps (type -> namespace -> name),
 * one global resourceVersion counter, and the recent history of changes that watches resume
 * from. Stored objects are never mutated: a change stores a new object. Each object's JSON is
 * made once and reused by every list and watch that sends it.
 */

// eslint-disable-next-line @typescript-eslint/no-explicit-any
export type Obj = Record<string, any>;

export type EventType = 'ADDED' | 'MODIFIED' | 'DELETED';

export interface StoreEvent {
  readonly type: EventType;
  readonly rv: number;
  /** The resource type's key (`group/plural`). */
  readonly key: string;
  /** The state after the change; for DELETED the last state, at the deletion's version. */
  readonly object: Obj;
  /** The state before (MODIFIED, DELETED). */
  readonly previous?: Obj;
}

export type StoreListener = (event: StoreEvent) => void;

const json = new WeakMap<Obj, string>();

/** The object's JSON, made once per stored object. */
export function jsonOf(obj: Obj): string {
  let text = json.get(obj);
  if (text === undefined) {
    text = JSON.stringify(obj);
    json.set(obj, text);
  }
  return text;
}

export class Store {
  private rv = 0;
  private readonly buckets = new Map<string, Map<string, Map<string, Obj>>>();
  private history: StoreEvent[] = [];
  /** Watches may resume from this version or later; older ones are gone (410). */
  private oldestResumable = 0;
  private readonly listeners: StoreListener[] = [];

  constructor(private readonly historyLimit: number) {}

  get resourceVersion(): number {
    return this.rv;
  }

  /** The oldest resourceVersion a watch can resume from. */
  get compactedRevision(): number {
    return this.oldestResumable;
  }

  onChange(listener: StoreListener): void {
    this.listeners.push(listener);
  }

  get(key: string, namespace: string, name: string): Obj | undefined {
    return this.buckets.get(key)?.get(namespace)?.get(name);
  }

  /** Objects of a type (of one namespace when given), sorted by namespace then name as the real server lists them. */
  items(key: string, namespace?: string): Obj[] {
    const bucket = this.buckets.get(key);
    if (!bucket) return [];
    const namespaces = namespace !== undefined ? [namespace] : [...bucket.keys()].sort();
    const out: Obj[] = [];
    for (const ns of namespaces) {
      const byName = bucket.get(ns);
      if (!byName) continue;
      const names = [...byName.keys()].sort();
      for (const name of names) out.push(byName.get(name) as Obj);
    }
    return out;
  }

  count(key: string): number {
    let n = 0;
    for (const byName of this.buckets.get(key)?.values() ?? []) n += byName.size;
    return n;
  }

  /** Namespaces holding objects of any type (for namespace deletion). */
  typesIn(namespace: string): string[] {
    return [...this.buckets.entries()].filter(([, b]) => (b.get(namespace)?.size ?? 0) > 0).map(([k]) => k);
  }

  /** Stores a change under the next resourceVersion (set into the object) and announces it. */
  commit(type: EventType, key: string, next: Obj, previous?: Obj): Obj {
    const rv = ++this.rv;
    const object: Obj = { ...next, metadata: { ...next.metadata, resourceVersion: String(rv) } };
    const namespace: string = object.metadata.namespace ?? '';
    const name: string = object.metadata.name;
    let bucket = this.buckets.get(key);
    if (!bucket) this.buckets.set(key, (bucket = new Map()));
    let byName = bucket.get(namespace);
    if (!byName) bucket.set(namespace, (byName = new Map()));
    if (type === 'DELETED') {
      byName.delete(name);
      if (byName.size === 0) bucket.delete(namespace);
    } else {
      byName.set(name, object);
    }
    const event: StoreEvent = { type, rv, key, object, previous };
    this.remember(event);
    for (const listener of this.listeners) listener(event);
    return object;
  }

  /** The changes after `rv`, or undefined when some of them are forgotten. */
  eventsSince(rv: number): StoreEvent[] | undefined {
    if (rv < this.oldestResumable) return undefined;
    let lo = 0;
    let hi = this.history.length;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (this.history[mid].rv <= rv) lo = mid + 1;
      else hi = mid;
    }
    return this.history.slice(lo);
  }

  /** Forgets the history: resuming from any version before now is 410 Gone. */
  compact(): void {
    this.history = [];
    this.oldestResumable = this.rv;
  }

  private remember(event: StoreEvent): void {
    this.history.push(event);
    // Trim in batches so a busy store does not shift the array on every change.
    if (this.history.length > this.historyLimit + Math.max(16, this.historyLimit >> 3)) {
      const drop = this.history.length - this.historyLimit;
      this.oldestResumable = this.history[drop - 1].rv;
      this.history = this.history.slice(drop);
    }
  }
}
