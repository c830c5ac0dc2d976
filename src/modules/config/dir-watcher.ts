import * as fs from 'node:fs';
import * as path from 'node:path';

/**
 * Watches a directory tree with one non-recursive watcher per directory. Node's recursive
 * mode on Linux watches files one by one and loses a file once an editor renames another
 * over it (its later deletion goes unseen); a directory watcher reports every entry that
 * is created, renamed, written or removed.
 *
 * Each event names the entry it is about (`path`), or nothing when the system did not say
 * (`undefined`: anything under the root may have changed).
 */
export class DirectoryTreeWatcher {
  private readonly watchers = new Map<string, fs.FSWatcher>();

  constructor(
    private readonly root: string,
    private readonly onEvent: (path: string | undefined) => void,
    private readonly onError: (err: Error) => void,
  ) {}

  /** Starts watching the root and every directory under it; throws when the root cannot be watched. */
  start(): void {
    this.refresh();
    if (!this.watchers.has(this.root)) throw new Error(`cannot watch ${this.root}`);
  }

  /** Adds watchers for new subdirectories and drops those of removed ones (call after each rescan). */
  refresh(): void {
    const present = new Set(directoriesUnder(this.root));
    for (const [dir, watcher] of this.watchers) {
      if (!present.has(dir)) {
        watcher.close();
        this.watchers.delete(dir);
      }
    }
    for (const dir of present) {
      if (this.watchers.has(dir)) continue;
      try {
        const watcher = fs.watch(dir, (_event, name) => this.onEvent(name ? path.join(dir, name) : undefined));
        watcher.on('error', (err) => {
          watcher.close();
          this.watchers.delete(dir);
          if (dir === this.root) this.onError(err);
          else this.onEvent(undefined);
        });
        this.watchers.set(dir, watcher);
      } catch (err) {
        if (dir === this.root) throw err;
      }
    }
  }

  close(): void {
    for (const w of this.watchers.values()) w.close();
    this.watchers.clear();
  }
}

function directoriesUnder(root: string): string[] {
  const out: string[] = [];
  const walk = (dir: string) => {
    let entries: fs.Dirent[];
    try {
      entries = fs.readdirSync(dir, { withFileTypes: true });
    } catch {
      return;
    }
    out.push(dir);
    for (const e of entries) if (e.isDirectory() && !e.name.startsWith('..')) walk(path.join(dir, e.name));
  };
  walk(root);
  return out;
}
