/**
 * Bounded concurrency for proxy pushes (PILOT_PUSH_THROTTLE): a push to one proxy is a job;
 * at most `limit` run at once; the rest wait in FIFO order. A proxy has at most one queued
 * job: newer work for it merges into the queued one (see XdsServer), so a slow proxy never
 * accumulates a backlog.
 */
export class PushQueue {
  private running = 0;
  private readonly waiting: Array<() => void> = [];

  constructor(private readonly limit: number) {}

  async run<T>(job: () => Promise<T>): Promise<T> {
    if (this.running >= this.limit) await new Promise<void>((resolve) => this.waiting.push(resolve));
    this.running += 1;
    // Let I/O (acks, writes, /ready) run between jobs: a push to thousands of proxies must
    // not hold the event loop from start to end.
    await new Promise<void>((resolve) => setImmediate(resolve));
    try {
      return await job();
    } finally {
      this.running -= 1;
      this.waiting.shift()?.();
    }
  }

  get depth(): number {
    return this.waiting.length;
  }
}

/** PILOT_PUSH_THROTTLE = 0 means "sized from the machine": the incumbent uses a multiple of the CPU count. */
export function pushThrottleFrom(setting: number, cpus: number): number {
  return setting > 0 ? setting : Math.max(10, cpus * 10);
}
