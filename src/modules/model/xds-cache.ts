/**
 * The xDS cache (PILOT_ENABLE_XDS_CACHE): encoded resources kept across pushes, so a push
 * rebuilds only what its change touched. Each entry lists the dependencies it was built
 * from as tags (`host:<hostname>`, `kind:<Kind>`, `services`, `address:<workload ip>`); a push evicts the entries
 * whose tags its change names. When the cache is full (PILOT_XDS_CACHE_SIZE), the oldest entry
 * not read since eviction last passed it goes (second chance, an approximate least recently used).
 */
export type CachedType = 'cds' | 'eds' | 'rds' | 'lds';

export interface XdsCacheObserver {
  read(hit: boolean): void;
  evicted(reason: 'dependency' | 'clear' | 'size', count: number): void;
  size(type: CachedType, entries: number): void;
}

interface Entry {
  type: CachedType;
  key: string;
  value: unknown;
  tags: readonly string[];
  /** Read since eviction last came round to it (second chance). */
  used: boolean;
  /** Its value is handed to the rebuild after an invalidation evicts it (see get). */
  keepPrevious: boolean;
}

export interface XdsCacheOptions {
  maxEntries: number;
  /** Types the cache serves (PILOT_ENABLE_CDS_CACHE and PILOT_ENABLE_RDS_CACHE switch cds and rds). */
  types: ReadonlySet<CachedType>;
  observer?: XdsCacheObserver;
}

export class XdsCache {
  /** Entries by type, then key: no key is built per lookup (a push looks up thousands). */
  private readonly byType = new Map<CachedType, Map<string, Entry>>();
  /** Every entry, oldest first: where eviction looks. */
  private readonly order = new Set<Entry>();
  private readonly byTag = new Map<string, Set<Entry>>();
  /**
   * Values the latest invalidation evicted, of entries that asked for it, by type and key,
   * until the next one: what a rebuild may start from (a route table whose virtual hosts all
   * came out the same). Only those entries: a DestinationRule change evicts every cluster.
   */
  private evicted = new Map<CachedType, Map<string, unknown>>();
  private epochNow = 0;

  constructor(private readonly options: XdsCacheOptions) {
    for (const type of options.types) this.byType.set(type, new Map());
  }

  /**
   * Counts invalidations and clears. A push context notes it when it is built: a push built
   * before the latest invalidation must not store what it builds, or a job of an older push
   * still running could put back what the newer push's change just evicted.
   */
  get epoch(): number {
    return this.epochNow;
  }

  enabled(type: CachedType): boolean {
    return this.options.types.has(type);
  }

  /**
   * The entry of `key`, else `build()` kept under `tags` (a function: worked out only on a
   * miss). With `keepPrevious`, an invalidation that evicts the entry keeps its value for the
   * rebuild: `build` is given the value the latest invalidation evicted under `key`, if any.
   */
  get<T>(type: CachedType, key: string, tags: readonly string[] | (() => readonly string[]), build: (previous: T | undefined) => T, keepPrevious = false): T {
    const entries = this.byType.get(type);
    if (!entries) return build(undefined);
    const hit = this.read(entries, key);
    if (hit) return hit.value as T;
    const value = build(this.evicted.get(type)?.get(key) as T | undefined);
    if (typeof tags === 'function') tags = tags();
    const entry: Entry = { type, key, value, tags, used: false, keepPrevious };
    entries.set(key, entry);
    this.order.add(entry);
    for (const tag of tags) {
      let held = this.byTag.get(tag);
      if (!held) this.byTag.set(tag, (held = new Set()));
      held.add(entry);
    }
    this.trim();
    this.reportSize(type);
    return value;
  }

  /** The entry of `key` if there is one, without building or storing anything. */
  peek<T>(type: CachedType, key: string): T | undefined {
    const entries = this.byType.get(type);
    return entries ? (this.read(entries, key)?.value as T | undefined) : undefined;
  }

  /**
   * Looks `key` up and counts the read. A hit only marks the entry: moving it to the back on
   * every read cost more than the read. Eviction gives a marked entry a second chance instead
   * (an approximate least recently used).
   */
  private read(entries: ReadonlyMap<string, Entry>, key: string): Entry | undefined {
    const hit = entries.get(key);
    if (hit) hit.used = true;
    this.options.observer?.read(hit !== undefined);
    return hit;
  }

  /** Evicts every entry depending on one of `tags`. */
  invalidate(tags: Iterable<string>): void {
    this.epochNow += 1;
    this.evicted = new Map();
    let count = 0;
    const touched = new Set<CachedType>();
    for (const tag of tags) {
      for (const entry of this.byTag.get(tag) ?? []) {
        if (!this.order.has(entry)) continue;
        this.remove(entry);
        if (entry.keepPrevious) {
          let evicted = this.evicted.get(entry.type);
          if (!evicted) this.evicted.set(entry.type, (evicted = new Map()));
          evicted.set(entry.key, entry.value);
        }
        touched.add(entry.type);
        count += 1;
      }
      this.byTag.delete(tag);
    }
    if (count > 0) this.options.observer?.evicted('dependency', count);
    for (const t of touched) this.reportSize(t);
  }

  clear(): void {
    this.epochNow += 1;
    this.evicted = new Map();
    const count = this.order.size;
    for (const entries of this.byType.values()) entries.clear();
    this.order.clear();
    this.byTag.clear();
    if (count > 0) this.options.observer?.evicted('clear', count);
    for (const t of this.options.types) this.reportSize(t);
  }

  get size(): number {
    return this.order.size;
  }

  /** Over the size, the oldest entry not read since it was last looked at goes; a read one goes to the back, unmarked. */
  private trim(): void {
    let count = 0;
    while (this.order.size > this.options.maxEntries) {
      const oldest = this.order.values().next().value as Entry;
      if (oldest.used) {
        oldest.used = false;
        this.order.delete(oldest);
        this.order.add(oldest);
        continue;
      }
      this.remove(oldest);
      count += 1;
    }
    if (count > 0) this.options.observer?.evicted('size', count);
  }

  private remove(entry: Entry): void {
    this.byType.get(entry.type)?.delete(entry.key);
    this.order.delete(entry);
    for (const tag of entry.tags) {
      const held = this.byTag.get(tag);
      held?.delete(entry);
      if (held?.size === 0) this.byTag.delete(tag);
    }
  }

  private reportSize(type: CachedType): void {
    this.options.observer?.size(type, this.byType.get(type)?.size ?? 0);
  }
}
