/**
 * Token bucket for incoming xDS connections (PILOT_MAX_REQUESTS_PER_SECOND): a reconnect
 * storm after a restart is admitted at a steady rate instead of all at once. Waiters are
 * served in arrival order.
 */
export class RateLimiter {
  private tokens: number;
  private last = Date.now();
  private readonly queue: Array<() => void> = [];
  private timer: NodeJS.Timeout | undefined;

  constructor(
    private readonly perSecond: number,
    private readonly burst: number = Math.max(1, Math.ceil(perSecond)),
  ) {
    this.tokens = this.burst;
  }

  /** Resolves when a token is available. */
  acquire(): Promise<void> {
    this.refill();
    if (this.queue.length === 0 && this.tokens >= 1) {
      this.tokens -= 1;
      return Promise.resolve();
    }
    return new Promise((resolve) => {
      this.queue.push(resolve);
      this.schedule();
    });
  }

  private refill(): void {
    const now = Date.now();
    this.tokens = Math.min(this.burst, this.tokens + ((now - this.last) / 1000) * this.perSecond);
    this.last = now;
  }

  private schedule(): void {
    if (this.timer) return;
    const wait = Math.max(1, Math.ceil(((1 - this.tokens) / this.perSecond) * 1000));
    this.timer = setTimeout(() => {
      this.timer = undefined;
      this.refill();
      while (this.queue.length > 0 && this.tokens >= 1) {
        this.tokens -= 1;
        this.queue.shift()!();
      }
      if (this.queue.length > 0) this.schedule();
    }, wait);
  }
}

/** 0 means "sized from the machine", as the spec says: a generous rate per core. */
export function requestsPerSecondFrom(setting: number, cpus: number): number {
  return setting > 0 ? setting : Math.max(100, cpus * 100);
}
