import type { Readable } from 'node:stream';
import { listConfigFiles } from './files';
import { readConfigFile, readStreamAtMost } from './read-file';

/** What reading one `-f` target gives, in order; each command decides what each means to it. */
export type TargetItem =
  /** A file's bytes (or stdin's, named `<stdin>`). */
  | { kind: 'bytes'; file: string; bytes: Buffer }
  /** A file that was not read: `skipped` when it is not a regular file; `message` says why. */
  | { kind: 'unread'; file: string; message: string; skipped: boolean }
  /** A subdirectory of the target that could not be listed (its files are unknown). */
  | { kind: 'unreadable-dir'; target: string; dir: string; message: string }
  /** The target itself cannot be read (missing, unreadable). */
  | { kind: 'target-error'; target: string; message: string }
  /** A directory target with no config files in it (and none unreadable). */
  | { kind: 'no-files'; target: string };

/**
 * The config files `-f` names, read as the daemon's `--configDir` reads them: files or
 * directories (recursively; regular files only, within `maxBytes`), `-` for `stdin` when given.
 * Shared by the commands that take `-f` (validate, analyze, authz simulate).
 */
export async function* readConfigTargets(targets: readonly string[], maxBytes: number, stdin?: Readable): AsyncGenerator<TargetItem> {
  for (const target of targets) {
    if (target === '-' && stdin) {
      try {
        yield { kind: 'bytes', file: '<stdin>', bytes: await readStreamAtMost(stdin, maxBytes) };
      } catch (err) {
        yield { kind: 'unread', file: '<stdin>', message: (err as Error).message, skipped: false };
      }
      continue;
    }
    let listing;
    try {
      listing = await listConfigFiles(target);
    } catch (err) {
      const e = err as NodeJS.ErrnoException;
      yield { kind: 'target-error', target, message: e.code === 'ENOENT' ? 'no such file or directory' : e.message };
      continue;
    }
    for (const { dir, message } of listing.unreadableDirs) yield { kind: 'unreadable-dir', target, dir, message };
    if (listing.files.length === 0 && listing.unreadableDirs.length === 0) yield { kind: 'no-files', target };
    for (const file of listing.files) {
      const read = await readConfigFile(file, maxBytes);
      if (read.kind === 'bytes') yield { kind: 'bytes', file, bytes: read.bytes };
      else if (read.kind === 'gone') yield { kind: 'unread', file, message: 'removed while being read', skipped: false };
      else yield { kind: 'unread', file, message: read.message, skipped: read.kind === 'skipped' };
    }
  }
}
