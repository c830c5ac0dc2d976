/**
 * Runs at most `limit` tasks at once (the `--rq-concurrency` bound on requests in flight);
 * the rest wait their turn in order.
 */
export class Limiter {
  private running = 0;
  private readonly waiting: (() => void)[] = [];
  /** The most tasks that ran at once (for tests and the summary). */
  peak = 0;

  constructor(private readonly limit: number) {
    if (!Number.isInteger(limit) || limit < 1) throw new Error(`concurrency limit must be a positive integer, got ${limit}`);
  }

  async run<T>(task: () => Promise<T>): Promise<T> {
    // A finishing task hands its slot straight to the next waiting one, so none slips in between.
    if (this.running >= this.limit) await new Promise<void>((r) => this.waiting.push(r));
    else this.running++;
    this.peak = Math.max(this.peak, this.running);
    try {
      return await task();
    } finally {
      const next = this.waiting.shift();
      if (next) next();
      else this.running--;
    }
  }
}
