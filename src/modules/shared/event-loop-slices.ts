/**
 * Slices of the event loop for work made of many small synchronous pieces (a push to thousands
 * of proxies, a connect storm's thousands of first requests): pieces run back to back for a
 * slice of time, then everything still to run waits for one turn of the event loop together,
 * so I/O (acknowledgements, writes, /ready) is never held for longer than about a slice. A
 * turn per piece would cost more than a small piece itself.
 *
 * Pieces that share a slice share one instance: the xDS server's push jobs and responses do.
 */
export class EventLoopSlices {
  private turn: Promise<void> | undefined;
  private sliceStartedAt = 0;

  constructor(private readonly sliceMs = SLICE_MS) {}

  /**
   * Undefined while the current slice has time left (go on now); otherwise the next turn of
   * the event loop, which starts a new slice. Everyone who asks before it comes waits for the
   * same turn.
   */
  due(): Promise<void> | undefined {
    if (performance.now() - this.sliceStartedAt < this.sliceMs) return undefined;
    this.turn ??= new Promise<void>((resolve) =>
      setImmediate(() => {
        this.turn = undefined;
        this.sliceStartedAt = performance.now();
        resolve();
      }),
    );
    return this.turn;
  }
}

/** How long pieces may run one after another before I/O gets a turn. */
const SLICE_MS = 2;
