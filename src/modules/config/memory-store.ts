import { isDeepStrictEqual } from 'node:util';
import { inject, injectable, optional } from 'inversify';
import type { ScopedLogger } from '../logging';
import { ConfigResource, resourceKey } from './resource';
import { ConfigChange, ConfigSnapshot, ConfigStore } from './store';

/** Two source parts (or two documents of one part) declare the same `Kind/namespace/name`. */
export interface ConfigConflict {
  key: string;
  /** The source whose version is served: the first in sorted sourceId order (of the lowest layer). */
  winner: string;
  /** The other sources declaring the key; their versions are ignored while the winner has it. */
  ignored: string[];
}

/** One part of a source (e.g. one file) replaced with these resources, or removed when `null`. */
export interface SourcePart {
  sourceId: string;
  resources: readonly ConfigResource[] | null;
}

/** Bound by the program that keeps config (the daemon counts conflicts in its metrics). */
export const MemoryConfigStoreOptionsToken = Symbol.for('mesh.MemoryConfigStoreOptions');
export interface MemoryConfigStoreOptions {
  /** Called for each conflict in an applied batch; the daemon may count these as ignored configs. */
  onConflict?: (conflict: ConfigConflict) => void;
  /** Logs conflicts (when no onConflict is given) and listener failures. */
  logger?: Pick<ScopedLogger, 'warn' | 'error'>;
  /**
   * The layer of a part: when parts of different layers declare one key, the lowest layer is
   * served (files overlay the orchestrator's resources); within a layer the first sourceId.
   * Default: every part in layer 0.
   */
  layerOf?: (sourceId: string) => number;
}

/**
 * The config store in memory, written by sources one part at a time. Each part (a file, say)
 * owns the resources it declares; when parts disagree on a key the first sourceId wins, so the
 * outcome does not depend on the order in which files were read.
 */
@injectable()
export class MemoryConfigStore implements ConfigStore {
  /** sourceId → key → resource, as the source declared them. */
  private readonly parts = new Map<string, Map<string, ConfigResource>>();
  /** key → sourceIds declaring it (usually one). */
  private readonly claimants = new Map<string, Set<string>>();
  /** key → the served resource. */
  private readonly served = new Map<string, ConfigResource>();
  private current: ConfigSnapshot = new Map();
  private readonly listeners = new Set<(changes: readonly ConfigChange[]) => void>();

  constructor(@inject(MemoryConfigStoreOptionsToken) @optional() private readonly options: MemoryConfigStoreOptions = {}) {}

  snapshot(): ConfigSnapshot {
    return this.current;
  }

  onChange(listener: (changes: readonly ConfigChange[]) => void): () => void {
    // Wrapped so the same function can subscribe twice and unsubscribe each independently.
    const entry = (changes: readonly ConfigChange[]) => listener(changes);
    this.listeners.add(entry);
    return () => void this.listeners.delete(entry);
  }

  /** The resources of one part, replacing what it declared before. Returns the changes applied. */
  replaceSource(sourceId: string, resources: readonly ConfigResource[]): ConfigChange[] {
    return this.applyBatch([{ sourceId, resources }]);
  }

  /** Drops one part and everything only it declared. Returns the changes applied. */
  removeSource(sourceId: string): ConfigChange[] {
    return this.applyBatch([{ sourceId, resources: null }]);
  }

  /** The parts currently held, sorted. */
  sourceIds(): string[] {
    return [...this.parts.keys()].sort(compare);
  }

  /** Which part serves a key, for debugging conflicts. */
  ownerOf(key: string): string | undefined {
    const ids = this.claimants.get(key);
    return ids && ids.size ? this.winnerOf(ids) : undefined;
  }

  /**
   * Several parts at once, e.g. every file touched in one debounce window: one snapshot and
   * one notification for all of them. Returns the changes (sorted by key; empty if none).
   * `seenAt`: when the source saw the last of these changes happen (ConfigChange.seenAt).
   */
  applyBatch(batch: readonly SourcePart[], seenAt?: number): ConfigChange[] {
    const touched = new Set<string>();
    const redeclared = new Set<string>();
    const conflicts = new Map<string, ConfigConflict>();
    for (const { sourceId, resources } of batch) {
      const before = this.parts.get(sourceId);
      for (const key of before?.keys() ?? []) {
        touched.add(key);
        this.unclaim(key, sourceId);
      }
      if (resources === null) {
        this.parts.delete(sourceId);
        continue;
      }
      const declared = new Map<string, ConfigResource>();
      for (const r of resources) {
        const key = resourceKey(r);
        // The same key twice in one part: keep the first document, as across parts.
        if (declared.has(key)) conflicts.set(`${key}\0${sourceId}`, { key, winner: sourceId, ignored: [sourceId] });
        else declared.set(key, r);
      }
      this.parts.set(sourceId, declared);
      for (const key of declared.keys()) {
        touched.add(key);
        redeclared.add(key);
        let ids = this.claimants.get(key);
        if (!ids) this.claimants.set(key, (ids = new Set()));
        ids.add(sourceId);
      }
    }
    // Conflicts once the whole batch is in, so a part removed later in the batch does not count.
    for (const key of redeclared) {
      const ids = this.claimants.get(key);
      if (!ids || ids.size < 2) continue;
      const winner = this.winnerOf(ids);
      conflicts.set(key, { key, winner, ignored: [...ids].filter((id) => id !== winner).sort(compare) });
    }

    const changes = this.resolve(touched);
    if (seenAt !== undefined) for (const c of changes) c.seenAt = seenAt;
    for (const c of conflicts.values()) this.reportConflict(c);
    if (changes.length) this.publish(changes);
    return changes;
  }

  /** The part served among those declaring a key: lowest layer, then first sourceId. */
  private winnerOf(ids: Iterable<string>): string {
    const layerOf = this.options.layerOf;
    if (!layerOf) return minOf(ids);
    let best: string | undefined;
    let bestLayer = Infinity;
    for (const id of ids) {
      const layer = layerOf(id);
      if (best === undefined || layer < bestLayer || (layer === bestLayer && id < best)) {
        best = id;
        bestLayer = layer;
      }
    }
    return best!;
  }

  private unclaim(key: string, sourceId: string): void {
    const ids = this.claimants.get(key);
    ids?.delete(sourceId);
    if (ids && ids.size === 0) this.claimants.delete(key);
  }

  /** Picks the winner of each touched key and compares it to what was served. */
  private resolve(touched: Set<string>): ConfigChange[] {
    const changes: ConfigChange[] = [];
    for (const key of [...touched].sort(compare)) {
      const ids = this.claimants.get(key);
      const next = ids && ids.size ? this.parts.get(this.winnerOf(ids))!.get(key)! : undefined;
      const prev = this.served.get(key);
      if (next) this.served.set(key, next);
      else this.served.delete(key);
      // Same content re-declared (a file rewritten, a conflict resolved to an equal copy): no event.
      if (prev && next && (prev === next || isDeepStrictEqual(prev, next))) {
        this.served.set(key, prev);
        continue;
      }
      if (!prev && !next) continue;
      const kind = (next ?? prev)!.kind;
      changes.push({ key, kind, type: !prev ? 'added' : !next ? 'deleted' : 'updated' });
    }
    return changes;
  }

  /** A new snapshot: a new Map and new lists for changed kinds, so older snapshots stay valid. */
  private publish(changes: readonly ConfigChange[]): void {
    const kinds = new Set(changes.map((c) => c.kind));
    const byKind = new Map<string, ConfigResource[]>();
    for (const [, r] of this.served) {
      if (!kinds.has(r.kind)) continue;
      let list = byKind.get(r.kind);
      if (!list) byKind.set(r.kind, (list = []));
      list.push(r);
    }
    const next = new Map(this.current);
    for (const kind of kinds) {
      const list = byKind.get(kind);
      if (!list) next.delete(kind);
      else next.set(kind, Object.freeze(list.sort(byNamespaceName)));
    }
    this.current = next;
    this.notify(Object.freeze([...changes]));
  }

  private notify(changes: readonly ConfigChange[]): void {
    let failure: unknown;
    for (const listener of [...this.listeners]) {
      // One failing listener must not starve the others of the change.
      try {
        listener(changes);
      } catch (err) {
        if (this.options.logger) this.options.logger.error('config change listener failed', { error: String(err) });
        else failure ??= err;
      }
    }
    if (failure !== undefined) throw failure;
  }

  private reportConflict(c: ConfigConflict): void {
    if (this.options.onConflict) this.options.onConflict(c);
    else
      this.options.logger?.warn(
        c.ignored.includes(c.winner)
          ? `${c.key} is declared more than once in ${c.winner}; the first document is used`
          : `${c.key} is declared in ${[c.winner, ...c.ignored].join(', ')}; using ${c.winner}`,
        { key: c.key, winner: c.winner, ignored: c.ignored },
      );
  }
}

/** Code-point order, not locale order: the same on every machine. */
function compare(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

function minOf(ids: Iterable<string>): string {
  let min: string | undefined;
  for (const id of ids) if (min === undefined || id < min) min = id;
  return min!;
}

function byNamespaceName(a: ConfigResource, b: ConfigResource): number {
  return compare(a.metadata.namespace, b.metadata.namespace) || compare(a.metadata.name, b.metadata.name);
}
