/*
 * A controller's queue of keys to reconcile: a key queued many times before it runs is
 * reconciled once (so a burst of changes costs one pass), keys run one at a time, a failed
 * reconcile (a conflict with another writer, a webhook denying a pod) is retried with a
 * per-key backoff doubling from 50 ms to 5 s, as client-go's rate-limited queues do.
 */

export class WorkQueue {
  private readonly dirty = new Set<string>();
  private readonly failures = new Map<string, number>();
  private readonly timers = new Set<NodeJS.Timeout>();
  private running = false;
  private stopped = false;

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
    for (const timer of this.timers) clearTimeout(timer);
    this.timers.clear();
  }

  private async drain(): Promise<void> {
    if (this.running || this.stopped) return;
    this.running = true;
    try {
      while (this.dirty.size > 0 && !this.stopped) {
        const key = this.dirty.values().next().value as string;
        this.dirty.delete(key);
        try {
          await this.reconcile(key);
          this.failures.delete(key);
        } catch (err) {
          this.onError(key, err);
          this.retryLater(key);
        }
      }
    } finally {
      this.running = false;
    }
  }

  private retryLater(key: string): void {
    if (this.stopped) return;
    const failures = (this.failures.get(key) ?? 0) + 1;
    this.failures.set(key, failures);
    const timer = setTimeout(() => {
      this.timers.delete(timer);
      this.add(key);
    }, Math.min(5000, 50 * 2 ** (failures - 1)));
    timer.unref();
    this.timers.add(timer);
  }
}
