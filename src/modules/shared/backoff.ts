/**
 * Jittered exponential backoff, the one retry schedule of every client that reconnects (xDS,
 * SDS, the CA). Jitter spreads thousands of proxies that lost the same daemon over time, so a
 * restarted daemon is not met by all of them in the same instant.
 */
export interface BackoffOptions {
  /** First delay. */
  initialMs: number;
  /** No delay is longer than this (before jitter). */
  maxMs: number;
  /** Growth per attempt; default 2. */
  multiplier?: number;
  /** Each delay is scaled by a random factor in [1 - jitter, 1 + jitter]; default 0.2. */
  jitter?: number;
  /** [0, 1) source; tests fix it. */
  random?: () => number;
}

export class Backoff {
  private attempt = 0;

  constructor(private readonly options: BackoffOptions) {
    if (!(options.initialMs > 0) || !(options.maxMs >= options.initialMs)) {
      throw new RangeError(`backoff needs 0 < initialMs <= maxMs, got ${options.initialMs} and ${options.maxMs}`);
    }
  }

  /** The delay before the next attempt; each call counts one attempt. */
  next(): number {
    const { initialMs, maxMs, multiplier = 2, jitter = 0.2, random = Math.random } = this.options;
    const base = Math.min(maxMs, initialMs * multiplier ** this.attempt);
    this.attempt += 1;
    return Math.max(1, Math.round(base * (1 - jitter + 2 * jitter * random())));
  }

  /** After a success: the next delay is the first one again. */
  reset(): void {
    this.attempt = 0;
  }

  /** Attempts counted since the last reset. */
  get attempts(): number {
    return this.attempt;
  }
}
