import { KeyedQueue } from '../orch';
import { Backoff } from '../shared/backoff';

export interface ReconcileQueueOptions<K> {
  /** Brings the world in line for one key; a throw retries the key after a backoff. */
  reconcile(key: K): Promise<void>;
  /** A failed try, and whether it will be tried again. */
  failed(key: K, err: unknown, retrying: boolean): void;
  /** Retry schedule per key. */
  initialBackoffMs: number;
  maxBackoffMs: number;
  /** Tries of one key before it is dropped until its next event; default unlimited. */
  maxAttempts?: number;
}

/**
 * A controller's work queue: keys added by events are reconciled once each (de-duplicated,
 * batched by KeyedQueue), and a key whose reconcile fails is retried with its own jittered
 * exponential backoff, as the incumbent's rate-limited controller queues do.
 */
export class ReconcileQueue<K> {
  private readonly queue: KeyedQueue<K>;
  private readonly retries = new Map<K, { backoff: Backoff; attempts: number; timer?: NodeJS.Timeout }>();
  private stopped = false;

  constructor(private readonly options: ReconcileQueueOptions<K>) {
    this.queue = new KeyedQueue<K>(
      async (keys) => {
        for (const key of keys) await this.run(key);
      },
      () => undefined,
    );
  }

  add(key: K): void {
    if (this.stopped) return;
    const retry = this.retries.get(key);
    if (retry?.timer) {
      clearTimeout(retry.timer);
      retry.timer = undefined;
    }
    this.queue.add(key);
  }

  /** Resolves when nothing is queued or running (retries waiting on their timers do not count). */
  idle(): Promise<void> {
    return this.queue.idle();
  }

  stop(): void {
    this.stopped = true;
    for (const retry of this.retries.values()) clearTimeout(retry.timer);
    this.retries.clear();
    this.queue.stop();
  }

  private async run(key: K): Promise<void> {
    if (this.stopped) return;
    try {
      await this.options.reconcile(key);
      this.retries.delete(key);
    } catch (err) {
      if (this.stopped) return;
      let retry = this.retries.get(key);
      if (!retry) {
        retry = { backoff: new Backoff({ initialMs: this.options.initialBackoffMs, maxMs: this.options.maxBackoffMs }), attempts: 0 };
        this.retries.set(key, retry);
      }
      retry.attempts++;
      const again = this.options.maxAttempts === undefined || retry.attempts < this.options.maxAttempts;
      this.options.failed(key, err, again);
      if (!again) {
        this.retries.delete(key);
        return;
      }
      const entry = retry;
      entry.timer = setTimeout(() => {
        entry.timer = undefined;
        this.queue.add(key);
      }, entry.backoff.next());
      entry.timer.unref();
    }
  }
}
