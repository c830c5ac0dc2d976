/**
 * Watches one config file the way mounted config arrives: written in place, renamed over by
 * an editor, or swapped in by an orchestrator ConfigMap volume (the file is a symlink through
 * `..data`, and an update renames a new `..data` symlink over the old one). The directory
 * is watched, not the file (a file watch loses the file at the first rename), and the file
 * is also polled, so a directory that appears later, or a missed event, is caught too. Each
 * change is read once the writes settle, and reported only when the content changed.
 */
import { createHash } from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { readConfigFile } from '../config';
import { describeNonRegular } from '../config/read-file';

export type FileState =
  | { kind: 'text'; text: string }
  /** The file is gone (deleted, or its directory is). */
  | { kind: 'missing' }
  /** It cannot be read: not a regular file, too big, no permission. */
  | { kind: 'unreadable'; message: string };

export interface WatchedFileOptions {
  /** Bytes the file may have. */
  maxBytes: number;
  /** Quiet time after an event before the file is read. */
  settleMs?: number;
  /** How often the file is read regardless of events (0 = never). */
  pollMs?: number;
}

/** Reads the file now, synchronously, without blocking on a FIFO or reading more than `maxBytes`. */
export function readFileState(file: string, maxBytes: number): FileState {
  let stat: fs.Stats;
  try {
    stat = fs.statSync(file);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'ENOENT' || code === 'ENOTDIR') return { kind: 'missing' };
    return { kind: 'unreadable', message: `cannot read the file: ${code ?? (err as Error).message}` };
  }
  const what = describeNonRegular(stat);
  if (what) return { kind: 'unreadable', message: `${what}, not a regular file` };
  if (stat.size > maxBytes) return { kind: 'unreadable', message: `more than the ${maxBytes} bytes allowed` };
  try {
    return { kind: 'text', text: fs.readFileSync(file, 'utf8') };
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'ENOENT') return { kind: 'missing' };
    return { kind: 'unreadable', message: `cannot read the file: ${code ?? (err as Error).message}` };
  }
}

export class WatchedFile {
  private watcher: fs.FSWatcher | undefined;
  private settleTimer: NodeJS.Timeout | undefined;
  private pollTimer: NodeJS.Timeout | undefined;
  private fingerprint: string | undefined;
  private reading = false;
  private again = false;
  private stopped = true;

  constructor(
    readonly file: string,
    private readonly options: WatchedFileOptions,
    private readonly onState: (state: FileState) => void,
  ) {}

  /** Starts watching; `initial` is the state already read (changes are reported relative to it). */
  start(initial: FileState): void {
    if (!this.stopped) return;
    this.stopped = false;
    this.fingerprint = fingerprintOf(initial);
    this.watchDirectory();
    const pollMs = this.options.pollMs ?? 2000;
    if (pollMs > 0) {
      this.pollTimer = setInterval(() => {
        if (!this.watcher) this.watchDirectory();
        this.check();
      }, pollMs);
      this.pollTimer.unref();
    }
  }

  stop(): void {
    this.stopped = true;
    this.watcher?.close();
    this.watcher = undefined;
    clearTimeout(this.settleTimer);
    clearInterval(this.pollTimer);
  }

  /** Reads the file now and reports it if it changed (what an event leads to, after the settle time). */
  check(): void {
    if (this.stopped) return;
    if (this.reading) {
      this.again = true;
      return;
    }
    this.reading = true;
    void this.read().finally(() => {
      this.reading = false;
      if (this.again) {
        this.again = false;
        this.check();
      }
    });
  }

  private async read(): Promise<void> {
    const state = await readAsync(this.file, this.options.maxBytes);
    if (this.stopped) return;
    const fp = fingerprintOf(state);
    if (fp === this.fingerprint) return;
    this.fingerprint = fp;
    this.onState(state);
  }

  private watchDirectory(): void {
    const dir = path.dirname(path.resolve(this.file));
    try {
      const watcher = fs.watch(dir, () => this.settle());
      watcher.on('error', () => {
        // The directory went away: polling takes over until it is back.
        watcher.close();
        if (this.watcher === watcher) this.watcher = undefined;
        this.settle();
      });
      this.watcher = watcher;
    } catch {
      this.watcher = undefined;
    }
  }

  private settle(): void {
    if (this.stopped) return;
    clearTimeout(this.settleTimer);
    this.settleTimer = setTimeout(() => this.check(), this.options.settleMs ?? 100);
    this.settleTimer.unref();
  }
}

async function readAsync(file: string, maxBytes: number): Promise<FileState> {
  const read = await readConfigFile(file, maxBytes);
  switch (read.kind) {
    case 'bytes':
      return { kind: 'text', text: read.bytes.toString('utf8') };
    case 'gone':
      return { kind: 'missing' };
    case 'skipped':
      // A dangling symlink (a ConfigMap volume mid-swap, or the file deleted) reads as gone.
      return read.fingerprint.startsWith('dangling:') ? { kind: 'missing' } : { kind: 'unreadable', message: read.message };
    case 'rejected':
      return { kind: 'unreadable', message: read.fingerprint.startsWith('too-large:') ? `more than the ${maxBytes} bytes allowed` : read.message };
  }
}

function fingerprintOf(state: FileState): string {
  switch (state.kind) {
    case 'text':
      return `text:${createHash('sha256').update(state.text).digest('hex')}`;
    case 'missing':
      return 'missing';
    case 'unreadable':
      return `unreadable:${state.message}`;
  }
}
