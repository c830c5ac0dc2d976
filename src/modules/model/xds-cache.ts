/**
 * The xDS cache (PILOT_ENABLE_XDS_CACHE): encoded resources kept across pushes, so a push
 * rebuilds only what its change touched. Each entry lists the dependencies it was built
 * from as tags (`host:<hostname>`, `kind:<Kind>`, `services`, `address:<workload ip>`); a push evicts the entries
 * whose tags its change names. Least recently used entries go when the cache is full
 * (PILOT_XDS_CACHE_SIZE).
 */
export type CachedType = 'cds' | 'eds' | 'rds' | 'lds';

export interface XdsCacheObserver {
  read(hit: boolean): void;
  evicted(reason: 'dependency' | 'clear' | 'size', count: number): void;
  size(type: CachedType, entries: number): void;
}

interface Entry {
  type: CachedType;
  value: unknown;
  tags: readonly string[];
}

export interface XdsCacheOptions {
  maxEntries: number;
  /** Types the cache serves (PILOT_ENABLE_CDS_CACHE and PILOT_ENABLE_RDS_CACHE switch cds and rds). */
  types: ReadonlySet<CachedType>;
  observer?: XdsCacheObserver;
}

export class XdsCache {
  private readonly entries = new Map<string, Entry>();
  private readonly byTag = new Map<string, Set<string>>();
  private readonly counts = new Map<CachedType, number>();

  constructor(private readonly options: XdsCacheOptions) {}

  enabled(type: CachedType): boolean {
    return this.options.types.has(type);
  }

  /** The entry of `key`, else `build()` kept under `tags` (a function: worked out only on a miss). */
  get<T>(type: CachedType, key: string, tags: readonly string[] | (() => readonly string[]), build: () => T): T {
    if (!this.enabled(type)) return build();
    const id = `${type}/${key}`;
    const hit = this.entries.get(id);
    if (hit) {
      // Re-insert: Map order is the recency order.
      this.entries.delete(id);
      this.entries.set(id, hit);
      this.options.observer?.read(true);
      return hit.value as T;
    }
    this.options.observer?.read(false);
    const value = build();
    if (typeof tags === 'function') tags = tags();
    this.entries.set(id, { type, value, tags });
    this.counts.set(type, (this.counts.get(type) ?? 0) + 1);
    for (const tag of tags) {
      let ids = this.byTag.get(tag);
      if (!ids) this.byTag.set(tag, (ids = new Set()));
      ids.add(id);
    }
    this.trim();
    this.reportSize(type);
    return value;
  }

  /** Evicts every entry depending on one of `tags`. */
  invalidate(tags: Iterable<string>): void {
    let count = 0;
    const touched = new Set<CachedType>();
    for (const tag of tags) {
      for (const id of this.byTag.get(tag) ?? []) {
        const entry = this.entries.get(id);
        if (!entry) continue;
        this.remove(id, entry);
        touched.add(entry.type);
        count += 1;
      }
      this.byTag.delete(tag);
    }
    if (count > 0) this.options.observer?.evicted('dependency', count);
    for (const t of touched) this.reportSize(t);
  }

  clear(): void {
    const count = this.entries.size;
    this.entries.clear();
    this.byTag.clear();
    this.counts.clear();
    if (count > 0) this.options.observer?.evicted('clear', count);
    for (const t of this.options.types) this.reportSize(t);
  }

  get size(): number {
    return this.entries.size;
  }

  private trim(): void {
    let count = 0;
    while (this.entries.size > this.options.maxEntries) {
      const [id, entry] = this.entries.entries().next().value as [string, Entry];
      this.remove(id, entry);
      count += 1;
    }
    if (count > 0) this.options.observer?.evicted('size', count);
  }

  private remove(id: string, entry: Entry): void {
    this.entries.delete(id);
    this.counts.set(entry.type, (this.counts.get(entry.type) ?? 1) - 1);
    for (const tag of entry.tags) {
      const ids = this.byTag.get(tag);
      ids?.delete(id);
      if (ids?.size === 0) this.byTag.delete(tag);
    }
  }

  private reportSize(type: CachedType): void {
    this.options.observer?.size(type, this.counts.get(type) ?? 0);
  }
}
