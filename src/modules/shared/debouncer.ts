/**
 * Coalesces bursts of change events into one push: fires `quietMs` after the last event,
 * but never later than `maxMs` after the first one (PILOT_DEBOUNCE_AFTER / PILOT_DEBOUNCE_MAX).
 * Events are merged with `merge` while waiting; `fire` gets the merged value, the time the
 * first event arrived (for pilot_debounce_time) and the time the last one happened.
 *
 * An event may say it happened before it arrived: a source that waited for its own quiet
 * period (the config directory's watch) hands on when its last event was seen, so the two
 * quiet periods overlap instead of adding up.
 */
export class Debouncer<T> {
  private pending: T | undefined;
  private firstAt = 0;
  private lastAt = 0;
  private timer: NodeJS.Timeout | undefined;
  private stopped = false;

  constructor(
    private readonly quietMs: number,
    private readonly maxMs: number,
    private readonly merge: (a: T, b: T) => T,
    private readonly fire: (value: T, firstEventAt: number, lastEventAt: number) => void,
  ) {}

  /**
   * Adds an event; `immediate` skips the quiet period (e.g. EDS when PILOT_ENABLE_EDS_DEBOUNCE
   * is off). `happenedAt` (epoch ms, default now) is when the event was first seen, for the
   * quiet period only: the maximum delay still counts from arrival.
   */
  add(event: T, immediate = false, happenedAt?: number): void {
    if (this.stopped) return;
    const now = Date.now();
    const at = happenedAt === undefined ? now : Math.min(happenedAt, now);
    if (this.pending === undefined) {
      this.pending = event;
      this.firstAt = now;
      this.lastAt = at;
    } else {
      this.pending = this.merge(this.pending, event);
      this.lastAt = Math.max(this.lastAt, at);
    }
    if (immediate || this.quietMs <= 0) {
      this.flush();
      return;
    }
    this.schedule();
  }

  private schedule(): void {
    if (this.timer) return;
    const wait = Math.max(0, Math.min(this.lastAt + this.quietMs, this.firstAt + this.maxMs) - Date.now());
    this.timer = setTimeout(() => {
      this.timer = undefined;
      const now = Date.now();
      if (now - this.lastAt >= this.quietMs || now - this.firstAt >= this.maxMs) this.flush();
      else this.schedule();
    }, wait);
  }

  /** Fires now with whatever is pending. */
  flush(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    if (this.pending === undefined) return;
    const value = this.pending;
    const { firstAt, lastAt } = this;
    this.pending = undefined;
    this.fire(value, firstAt, lastAt);
  }

  stop(): void {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    this.pending = undefined;
  }
}
