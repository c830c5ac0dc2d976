/**
 * The self-signed root's rotator: every CA_SELF_SIGNED_ROOT_CERT_CHECK_INTERVAL it drops
 * expired previous roots and, when the root's remaining life is below
 * CA_SELF_SIGNED_ROOT_CERT_GRACE_PERIOD_PERCENTILE % of its whole life, rotates it. With
 * CA_ENABLE_JITTER_FOR_ROOT_CERT_ROTATOR the first check comes after a random delay below
 * the interval, so daemons started together do not rotate together.
 */
import { messageOf } from './errors';
import { CaLogger } from './logger';
import { SigningChain } from './signing-chain';

export interface RotatableCa {
  signing(): SigningChain;
  rotate(): Promise<void>;
  pruneExpiredRoots(): void;
}

export interface RootRotatorOptions {
  /** Zero or negative disables the rotator. */
  checkIntervalMs: number;
  gracePeriodPercentile: number;
  jitter: boolean;
  now: () => number;
  /** In [0, 1); Math.random by default. */
  random?: () => number;
  logger: CaLogger;
}

export class RootRotator {
  private firstTimer: NodeJS.Timeout | undefined;
  private interval: NodeJS.Timeout | undefined;
  private checking: Promise<boolean> | undefined;

  constructor(
    private readonly ca: RotatableCa,
    private readonly options: RootRotatorOptions,
  ) {}

  get enabled(): boolean {
    return this.options.checkIntervalMs > 0;
  }

  start(): void {
    if (!this.enabled || this.firstTimer || this.interval) return;
    const every = this.options.checkIntervalMs;
    const firstDelay = this.options.jitter ? Math.floor((this.options.random ?? Math.random)() * every) : every;
    this.options.logger.info(`root certificate rotator checks every ${every} ms, first in ${firstDelay} ms`);
    this.firstTimer = setTimeout(() => {
      this.firstTimer = undefined;
      void this.check();
      this.interval = setInterval(() => void this.check(), every);
      this.interval.unref();
    }, firstDelay);
    this.firstTimer.unref();
  }

  stop(): void {
    clearTimeout(this.firstTimer);
    clearInterval(this.interval);
    this.firstTimer = undefined;
    this.interval = undefined;
  }

  /** One check (a check still running is joined, not repeated); resolves true when it rotated. */
  check(): Promise<boolean> {
    this.checking ??= this.checkOnce().finally(() => (this.checking = undefined));
    return this.checking;
  }

  private async checkOnce(): Promise<boolean> {
    try {
      this.ca.pruneExpiredRoots();
      const root = this.ca.signing().root;
      const now = this.options.now();
      const lifetime = root.notAfter.getTime() - root.notBefore.getTime();
      const remaining = root.notAfter.getTime() - now;
      const grace = (lifetime * this.options.gracePeriodPercentile) / 100;
      if (remaining >= grace) return false;
      this.options.logger.info(
        `the root certificate expires at ${root.notAfter.toISOString()}: ${Math.max(0, Math.round(remaining / 1000))} s left, below the grace period of ${this.options.gracePeriodPercentile}% of its lifetime; rotating it`,
      );
      await this.ca.rotate();
      return true;
    } catch (err) {
      this.options.logger.error(`root certificate rotation failed (retried at the next check): ${messageOf(err)}`);
      return false;
    }
  }
}
