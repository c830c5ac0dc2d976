import * as fs from 'node:fs';

/** Where formatted log lines go. Writes are synchronous so nothing is lost on exit. */
export interface LogSink {
  write(line: string): void;
  close(): void;
}

export function openSink(target: string): LogSink {
  if (target === 'stdout') return new FdSink(1, false);
  if (target === 'stderr') return new FdSink(2, false);
  let fd: number;
  try {
    fd = fs.openSync(target, 'a');
  } catch (err) {
    throw new Error(`--log_target: cannot open ${target}: ${(err as Error).message}`);
  }
  return new FdSink(fd, true);
}

/** How long a log line may wait for a full pipe before it is dropped; lines after it do not wait until one gets through. */
export const MAX_BLOCKED_MS = 100;
/** Between two tries at a full pipe. */
const RETRY_MS = 1;
const sleeper = new Int32Array(new SharedArrayBuffer(4));

/**
 * Writes whole lines to a file descriptor. A pipe whose reader is slower than the log (a busy
 * log shipper, a paused terminal pager) is non-blocking once Node has touched it, and a write
 * to it then fails with EAGAIN or takes part of the line: the sink waits a little for room,
 * writes the rest, and drops what cannot be written in time instead of throwing (which ended
 * the program) or stalling it. Dropped lines are counted in a line of their own once the
 * output takes lines again. A reader that is gone (EPIPE) drops the lines the same way.
 */
class FdSink implements LogSink {
  /** Lines dropped since the output last took one. */
  private dropped = 0;
  /** The last line dropped was cut short (part of it was written): what follows starts a new line. */
  private cut = false;

  constructor(
    private readonly fd: number,
    private readonly owned: boolean,
  ) {}

  write(line: string): void {
    // While lines are being dropped, a line does not wait: one stall per blocked spell.
    const waitMs = this.dropped > 0 ? 0 : MAX_BLOCKED_MS;
    if (this.dropped > 0 && this.writeAll(`${this.cut ? '\n' : ''}(${this.dropped} log line(s) dropped: the log output was not taking lines)\n`, 0)) {
      this.dropped = 0;
      this.cut = false;
    }
    if (!this.writeAll(line, waitMs)) this.dropped += 1;
  }

  close(): void {
    if (this.owned) fs.closeSync(this.fd);
  }

  /** Whether all of `text` was written within `waitMs` of waiting for room. */
  private writeAll(text: string, waitMs: number): boolean {
    let rest: Buffer | undefined;
    let waited = 0;
    for (;;) {
      try {
        if (rest === undefined) {
          const written = fs.writeSync(this.fd, text);
          if (written === Buffer.byteLength(text)) return true;
          rest = Buffer.from(text).subarray(written);
        } else {
          rest = rest.subarray(fs.writeSync(this.fd, rest));
        }
        if (rest.length === 0) return true;
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code !== 'EAGAIN' || waited >= waitMs) {
          if (rest !== undefined) this.cut = true;
          return false;
        }
        Atomics.wait(sleeper, 0, 0, RETRY_MS);
        waited += RETRY_MS;
      }
    }
  }
}
