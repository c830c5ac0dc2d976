/**
 * A one-line spinner on a terminal for a command's long waits (a port-forward opening, a daemon
 * answering): written to stderr only when it is a TTY, so piped or captured output never sees
 * it. `done()` clears the line; every call is safe after it.
 */
export interface Progress {
  /** Replaces the text shown. */
  update(text: string): void;
  /** Clears the line and stops. */
  done(): void;
}

const FRAMES = ['|', '/', '-', '\\'];
const INTERVAL_MS = 120;

export function terminalProgress(text: string, stream: NodeJS.WriteStream = process.stderr): Progress {
  if (!stream.isTTY) return { update: () => undefined, done: () => undefined };
  let current = text;
  let frame = 0;
  let stopped = false;
  const draw = () => {
    const width = Math.max(10, (stream.columns || 80) - 3);
    stream.write(`\r\x1b[2K${FRAMES[frame++ % FRAMES.length]} ${current.length > width ? `${current.slice(0, width - 3)}...` : current}`);
  };
  draw();
  const timer = setInterval(draw, INTERVAL_MS);
  timer.unref();
  return {
    update(next: string) {
      if (stopped) return;
      current = next;
      draw();
    },
    done() {
      if (stopped) return;
      stopped = true;
      clearInterval(timer);
      stream.write('\r\x1b[2K');
    },
  };
}

/** Runs `work` with a spinner showing `text` (on a terminal), cleared however it ends. */
export async function withProgress<T>(text: string, work: () => Promise<T>, stream: NodeJS.WriteStream = process.stderr): Promise<T> {
  const progress = terminalProgress(text, stream);
  try {
    return await work();
  } finally {
    progress.done();
  }
}
