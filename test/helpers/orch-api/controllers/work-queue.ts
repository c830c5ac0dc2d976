/*
 * A controller's queue of keys to reconcile: a key queued many times before it runs is
 * reconciled once (so a burst of changes costs one pass), keys run one at a time, a failed
 * reconcile (a conflict with another writer, say) is retried shortly after.
 */

export class WorkQueue {
  private readonly dirty = new Set<string>();
  private running = false;
  private stopped = false;
  private retryTimer?: NodeJS.Timeout;

  constructor(
    private readonly reconcile: (key: string) => Promise<void>,
    private readonly onError: (key: string, err: unknown) => void = () => undefined,
  ) {}

  add(key: string): void {
    if (this.stopped) return;
    this.dirty.add(key);
    if (!this.running) setImmediate(() => void this.drain());
  }

  stop(): void {
    this.stopped = true;
    this.dirty.clear();
    clearTimeout(this.retryTimer);
  }

  /** Resolves once nothing is queued or running. */
  get idle(): boolean {
    return !this.running && this.dirty.size === 0;
  }

  private async drain(): Promise<void> {
    if (this.running || this.stopped) return;
    this.running = true;
    const failed: string[] = [];
    try {
      while (this.dirty.size > 0 && !this.stopped) {
        const key = this.dirty.values().next().value as string;
        this.dirty.delete(key);
        try {
          await this.reconcile(key);
        } catch (err) {
          this.onError(key, err);
          failed.push(key);
        }
      }
    } finally {
      this.running = false;
    }
    if (failed.length > 0 && !this.stopped) {
      this.retryTimer = setTimeout(() => failed.forEach((k) => this.add(k)), 50);
      this.retryTimer.unref();
    }
  }
}
