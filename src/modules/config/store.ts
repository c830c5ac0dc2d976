import { ConfigResource } from './resource';

/** Resources by kind at one moment, each list sorted by `namespace/name`. */
export type ConfigSnapshot = ReadonlyMap<string, readonly ConfigResource[]>;

export interface ConfigChange {
  /** `Kind/namespace/name` */
  key: string;
  kind: string;
  type: 'added' | 'updated' | 'deleted';
  /**
   * When the source first saw this change (epoch ms), if that was before it was applied: a
   * source that waits for its own quiet period says when its last event came, so the push
   * debounce counts its quiet period from then (the two overlap instead of adding up).
   */
  seenAt?: number;
}

/** `2 added, 1 deleted`: a batch of changes for a log line. */
export function summarizeChanges(changes: readonly ConfigChange[]): string {
  const count = (t: ConfigChange['type']) => changes.filter((c) => c.type === t).length;
  return (['added', 'updated', 'deleted'] as const)
    .filter((t) => count(t))
    .map((t) => `${count(t)} ${t}`)
    .join(', ');
}

/**
 * The typed, validated resources the daemon serves from, whatever their source (DESIGN.md §2).
 * Sources write; the push pipeline reads snapshots and listens for changes.
 */
export interface ConfigStore {
  snapshot(): ConfigSnapshot;
  /** Called once per applied batch of changes (never with an empty list). Returns an unsubscribe function. */
  onChange(listener: (changes: readonly ConfigChange[]) => void): () => void;
}
