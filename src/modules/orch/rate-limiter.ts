import { performance } from 'node:perf_hooks';

/** The limiter was stopped while a request waited for its turn. */
export class RateLimiterStoppedError extends Error {
  constructor() {
    super('orchestrator client stopped');
  }
}

/**
 * The token bucket of the orchestrator client (`--orchApiQPS`, `--orchApiBurst`): up to `burst`
 * requests at once, then `qps` per second. Waiters are served in arrival order, so a busy
 * informer cannot starve a lone API call. A `qps` of zero or less means no limit.
 */
export class TokenBucket {
  private tokens: number;
  private last: number;
  private readonly waiters: Array<{ resolve: () => void; reject: (err: Error) => void }> = [];
  private timer: NodeJS.Timeout | undefined;
  private stopped = false;

  constructor(
    readonly qps: number,
    readonly burst: number,
    private readonly now: () => number = () => performance.now(),
  ) {
    if (qps > 0 && !(burst >= 1)) throw new RangeError(`burst must be at least 1, got ${burst}`);
    this.tokens = Math.max(1, burst);
    this.last = now();
  }

  get unlimited(): boolean {
    return !(this.qps > 0);
  }

  /** Resolves when the caller may send one request; rejects once the bucket is stopped. */
  take(): Promise<void> {
    if (this.stopped) return Promise.reject(new RateLimiterStoppedError());
    if (this.unlimited) return Promise.resolve();
    this.refill();
    if (this.waiters.length === 0 && this.tokens >= 1) {
      this.tokens -= 1;
      return Promise.resolve();
    }
    return new Promise((resolve, reject) => {
      this.waiters.push({ resolve, reject });
      this.schedule();
    });
  }

  /** Fails every waiting request; later takes fail at once. */
  stop(): void {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    for (const w of this.waiters.splice(0)) w.reject(new RateLimiterStoppedError());
  }

  private refill(): void {
    const now = this.now();
    this.tokens = Math.min(this.burst, this.tokens + ((now - this.last) / 1000) * this.qps);
    this.last = now;
  }

  private schedule(): void {
    if (this.timer || this.waiters.length === 0) return;
    const waitMs = Math.max(0, ((1 - this.tokens) / this.qps) * 1000);
    this.timer = setTimeout(() => {
      this.timer = undefined;
      this.refill();
      while (this.waiters.length > 0 && this.tokens >= 1) {
        this.tokens -= 1;
        this.waiters.shift()!.resolve();
      }
      this.schedule();
    }, Math.ceil(waitMs));
  }
}
