/**
 * The roots workloads trust: the CA's current root, plus, during a rotation overlap, the
 * previous root until it expires (certificates it signed stay verifiable meanwhile).
 */
import { Certificate } from './certificate';

export type RootsListener = (roots: string[]) => void;

export class TrustBundle {
  private current: readonly Certificate[];
  private readonly listeners = new Set<RootsListener>();

  constructor(
    roots: readonly Certificate[],
    private readonly onListenerError: (err: unknown) => void = () => {},
  ) {
    this.current = dedupe(roots);
  }

  roots(): readonly Certificate[] {
    return this.current;
  }

  pems(): string[] {
    return this.current.map((root) => root.pem);
  }

  /** Replaces the roots; listeners hear of it only when the set changed. Returns whether it did. */
  replace(roots: readonly Certificate[]): boolean {
    const next = dedupe(roots);
    const same = next.length === this.current.length && next.every((root, i) => root.equals(this.current[i]));
    if (same) return false;
    this.current = next;
    const pems = this.pems();
    for (const listener of [...this.listeners]) {
      try {
        listener(pems);
      } catch (err) {
        this.onListenerError(err);
      }
    }
    return true;
  }

  /** Calls `listener` with the new PEM roots after every change; returns the unsubscribe function. */
  onChange(listener: RootsListener): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }
}

function dedupe(roots: readonly Certificate[]): Certificate[] {
  return roots.filter((root, i) => roots.findIndex((other) => other.equals(root)) === i);
}
