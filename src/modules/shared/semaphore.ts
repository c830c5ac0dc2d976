import { Fifo } from './fifo';

/**
 * A weighted semaphore: work takes `weight` units of a fixed capacity and waits, in arrival
 * order, until they are free. A request heavier than the whole capacity goes alone, when
 * nothing else holds any.
 *
 * The xDS server bounds three things with it: proxy pushes running at once (PushQueue), the
 * responses being generated, and the bytes of responses written but not yet on the socket
 * (see xds/write-budget.ts).
 */
export class Semaphore {
  private taken = 0;
  /** Waiters in arrival order. */
  private readonly waiting = new Fifo<{ weight: number; resolve: () => void }>();

  constructor(readonly capacity: number) {}

  /** Resolves when `weight` units are taken; the caller must `release` the same weight. */
  acquire(weight = 1): Promise<void> {
    if (this.tryAcquire(weight)) return Promise.resolve();
    const want = Math.min(weight, this.capacity);
    return new Promise((resolve) => this.waiting.push({ weight: want, resolve }));
  }

  /** Takes `weight` units now if they are free and nobody waits before; false otherwise (nothing taken). */
  tryAcquire(weight = 1): boolean {
    const want = Math.min(weight, this.capacity);
    if (this.waiters > 0 || this.taken + want > this.capacity) return false;
    this.taken += want;
    return true;
  }

  release(weight = 1): void {
    this.taken -= Math.min(weight, this.capacity);
    for (let next = this.waiting.peek(); next && this.taken + next.weight <= this.capacity; next = this.waiting.peek()) {
      this.waiting.shift();
      this.taken += next.weight;
      next.resolve();
    }
  }

  get inUse(): number {
    return this.taken;
  }

  get waiters(): number {
    return this.waiting.size;
  }
}
