import { performance } from 'node:perf_hooks';

/** What a queue reports (pilot_worker_queue_depth, _latency, _duration) when queue metrics are on. */
export interface QueueObserver {
  depth(items: number): void;
  /** Seconds an item waited from its first add to being handled. */
  latency(seconds: number): void;
  /** Seconds one batch took to handle. */
  duration(seconds: number): void;
}

/**
 * A keyed, de-duplicating work queue: informer events add keys; a key added again before it
 * is handled is handled once, with whatever the caches hold by then. Keys pending at the same
 * moment are handled as one batch, so a relist of thousands of objects costs one pass and one
 * store update, not thousands.
 */
export class KeyedQueue<K> {
  /** key → when it was first added (performance.now()). */
  private pending = new Map<K, number>();
  private scheduled: NodeJS.Immediate | undefined;
  private running: Promise<void> | undefined;
  private stopped = false;
  private readonly idleWaiters: Array<() => void> = [];

  constructor(
    private readonly handle: (keys: K[]) => void | Promise<void>,
    private readonly onError: (err: unknown, keys: readonly K[]) => void,
    private readonly observer?: QueueObserver,
  ) {}

  get depth(): number {
    return this.pending.size;
  }

  add(key: K): void {
    if (this.stopped) return;
    if (!this.pending.has(key)) this.pending.set(key, performance.now());
    this.observer?.depth(this.pending.size);
    this.schedule();
  }

  /** Resolves once nothing is pending or being handled. */
  idle(): Promise<void> {
    if (this.pending.size === 0 && !this.running && !this.scheduled) return Promise.resolve();
    return new Promise((resolve) => this.idleWaiters.push(resolve));
  }

  stop(): void {
    this.stopped = true;
    if (this.scheduled) clearImmediate(this.scheduled);
    this.scheduled = undefined;
    this.pending.clear();
    this.observer?.depth(0);
    this.settle();
  }

  private schedule(): void {
    if (this.scheduled || this.running) return;
    // After the current event-loop turn: every event of one watch chunk or list lands in one batch.
    this.scheduled = setImmediate(() => {
      this.scheduled = undefined;
      void this.drain();
    });
  }

  private async drain(): Promise<void> {
    if (this.stopped || this.pending.size === 0) return this.settle();
    const batch = this.pending;
    this.pending = new Map();
    this.observer?.depth(0);
    const started = performance.now();
    for (const addedAt of batch.values()) this.observer?.latency((started - addedAt) / 1000);
    const keys = [...batch.keys()];
    const run = (async () => {
      try {
        await this.handle(keys);
      } catch (err) {
        this.onError(err, keys);
      }
    })();
    this.running = run;
    await run;
    this.running = undefined;
    this.observer?.duration((performance.now() - started) / 1000);
    if (this.pending.size > 0 && !this.stopped) this.schedule();
    else this.settle();
  }

  private settle(): void {
    if (this.pending.size > 0 || this.running || this.scheduled) return;
    for (const resolve of this.idleWaiters.splice(0)) resolve();
  }
}
