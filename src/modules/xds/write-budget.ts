/**
 * A cap on the response bytes written but not yet handed to the kernel, across all streams.
 *
 * When thousands of proxies connect at once, each one's first responses (megabytes of CDS
 * and EDS) would otherwise be encoded and queued together: gRPC copies each message and
 * HTTP/2 holds it until the socket takes it, so memory grows with the number of proxies.
 * Under the cap, a response is encoded only when there is room, and the room comes back
 * when its write completes (Node's HTTP/2 completes a write once the socket has it), so
 * memory follows the cap while the network stays busy.
 *
 * Waiters are served in order. A response larger than the cap goes alone, when nothing
 * else is in flight.
 */
export class WriteBudget {
  private inFlight = 0;
  private readonly waiting: { bytes: number; resolve: () => void }[] = [];

  constructor(readonly capacity: number) {}

  /** Resolves when `bytes` may be written; the caller must `release` the same amount. */
  acquire(bytes: number): Promise<void> {
    const want = Math.min(bytes, this.capacity);
    if (this.waiting.length === 0 && this.inFlight + want <= this.capacity) {
      this.inFlight += want;
      return Promise.resolve();
    }
    return new Promise((resolve) => this.waiting.push({ bytes: want, resolve }));
  }

  release(bytes: number): void {
    this.inFlight -= Math.min(bytes, this.capacity);
    while (this.waiting.length > 0 && this.inFlight + this.waiting[0].bytes <= this.capacity) {
      const next = this.waiting.shift()!;
      this.inFlight += next.bytes;
      next.resolve();
    }
  }

  get bytesInFlight(): number {
    return this.inFlight;
  }

  get waiters(): number {
    return this.waiting.length;
  }
}
