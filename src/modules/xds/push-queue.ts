import { EventLoopSlices } from '../shared/event-loop-slices';
import { Semaphore } from '../shared/semaphore';

/**
 * Bounded concurrency for proxy pushes (PILOT_PUSH_THROTTLE): a push to one proxy is a job;
 * at most `limit` run at once; the rest wait in FIFO order. A job lasts until the push's last
 * response is handed to gRPC, not until the socket takes it (the write budget paces that), so
 * a proxy that reads slowly or not at all never holds up the others. A proxy has at most one
 * queued job: newer work for it merges into the queued one (see AdsStream.queuePush), so a
 * slow proxy never accumulates a backlog.
 */
export class PushQueue {
  private readonly slots: Semaphore;

  private readonly slices = new EventLoopSlices();

  constructor(limit: number) {
    this.slots = new Semaphore(limit);
  }

  /**
   * Runs `job` in its turn. Its place is free again when it ends, or earlier when it calls
   * `release` (a push whose last response is with gRPC); releasing twice is harmless.
   */
  async run<T>(job: (release: () => void) => Promise<T>): Promise<T> {
    await this.slots.acquire();
    // Let I/O (acks, writes, /ready) run between jobs: a push to thousands of proxies must
    // not hold the event loop from start to end.
    const turn = this.slices.due();
    if (turn) await turn;
    let held = true;
    const release = (): void => {
      if (!held) return;
      held = false;
      this.slots.release();
    };
    try {
      return await job(release);
    } finally {
      release();
    }
  }

  get depth(): number {
    return this.slots.waiters;
  }
}

/** PILOT_PUSH_THROTTLE = 0 means "sized from the machine": the incumbent uses a multiple of the CPU count. */
export function pushThrottleFrom(setting: number, cpus: number): number {
  return setting > 0 ? setting : Math.max(10, cpus * 10);
}
