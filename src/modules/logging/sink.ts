import * as fs from 'node:fs';

/** Where formatted log lines go. Writes are synchronous so nothing is lost on exit. */
export interface LogSink {
  write(line: string): void;
  close(): void;
}

export function openSink(target: string): LogSink {
  if (target === 'stdout') return { write: (l) => void fs.writeSync(1, l), close: () => undefined };
  if (target === 'stderr') return { write: (l) => void fs.writeSync(2, l), close: () => undefined };
  let fd: number;
  try {
    fd = fs.openSync(target, 'a');
  } catch (err) {
    throw new Error(`--log_target: cannot open ${target}: ${(err as Error).message}`);
  }
  return { write: (l) => void fs.writeSync(fd, l), close: () => fs.closeSync(fd) };
}
