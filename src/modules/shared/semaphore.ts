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
  /** Waiters in arrival order from `head` on (a connect storm queues thousands: shift() would move them all each time). */
  private waiting: { weight: number; resolve: () => void }[] = [];
  private head = 0;

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
    while (this.waiters > 0 && this.taken + this.waiting[this.head].weight <= this.capacity) {
      const next = this.waiting[this.head];
      this.waiting[this.head++] = undefined!;
      this.taken += next.weight;
      next.resolve();
    }
    if (this.head === this.waiting.length) {
      this.waiting = [];
      this.head = 0;
    } else if (this.head > 1024 && this.head * 2 > this.waiting.length) {
      this.waiting = this.waiting.slice(this.head);
      this.head = 0;
    }
  }

  get inUse(): number {
    return this.taken;
  }

  get waiters(): number {
    return this.waiting.length - this.head;
  }
}
