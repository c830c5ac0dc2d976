import { Fifo } from './fifo';

/**
 * Slices of the event loop for work made of many small synchronous pieces (a push to thousands
 * of proxies, a connect storm's thousands of first requests): pieces run back to back for a
 * slice of time, then the rest wait for the next turn of the event loop, so I/O
 * (acknowledgements, writes, /ready) is never held for much longer than a slice. A turn per
 * piece would cost more than a small piece itself.
 *
 * Pieces that wait go on in arrival order, one at a time: each is let go only once the one
 * before has run its synchronous part, and only while the slice has time left. (Letting them
 * all go and having each check the time again sent thousands of waiters round once per slice.)
 */
export class EventLoopSlices {
  private readonly waiting = new Fifo<() => void>();
  private turnScheduled = false;
  private sliceStartedAt = 0;

  constructor(private readonly sliceMs = SLICE_MS) {}

  /**
   * Undefined when the piece may run now: nobody waits and the slice has time left.
   * Otherwise resolves when its turn comes.
   */
  due(): Promise<void> | undefined {
    if (this.waiters === 0 && performance.now() - this.sliceStartedAt < this.sliceMs) return undefined;
    const turn = new Promise<void>((resolve) => this.waiting.push(resolve));
    this.scheduleTurn();
    return turn;
  }

  /** Pieces waiting for their turn. */
  get waiters(): number {
    return this.waiting.size;
  }

  private scheduleTurn(): void {
    if (this.turnScheduled) return;
    this.turnScheduled = true;
    setImmediate(() => {
      this.turnScheduled = false;
      this.sliceStartedAt = performance.now();
      this.letNextGo(true);
    });
  }

  /**
   * Lets the next waiter go while the slice has time (the first of a slice always goes); it
   * runs (a microtask) before this is called again.
   */
  private letNextGo(sliceStart = false): void {
    if (this.waiters === 0) return;
    if (!sliceStart && performance.now() - this.sliceStartedAt >= this.sliceMs) {
      this.scheduleTurn();
      return;
    }
    this.waiting.shift()!();
    // Queued after the waiter's own continuation: it runs its synchronous part first.
    queueMicrotask(() => this.letNextGo());
  }
}

/** How long pieces may run one after another before I/O gets a turn. */
const SLICE_MS = 2;
