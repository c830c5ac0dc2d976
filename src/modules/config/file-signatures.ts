import * as fs from 'node:fs';

/**
 * How old a file's last change must be, at the moment it is stat'ed, before its stat
 * signature is trusted to stand for its content. File timestamps come from the kernel's
 * coarse clock (a few ms), so two writes close together can leave the same mtime and size;
 * a file changed that recently is read again on every resync until it is older than this
 * (git's "racily clean" rule).
 */
export const RACY_MARGIN_MS = 2000;

/** Files stat'ed at once: enough to keep the thread pool busy, few enough not to crowd out xDS. */
const STAT_CONCURRENCY = 32;

/** What one stat says of a file, as a comparable string; `trusted` when it may stand for the content. */
export interface FileSignature {
  value: string;
  trusted: boolean;
}

/**
 * The stat signature of each file (device, inode, mode, size, mtime and ctime in ns, after
 * symlinks), or none for a file that cannot be stat'ed (the reader then finds out why). A
 * file whose signature equals the one it had when it was last read has not been written
 * since, so a resync of a large directory reads only the files that changed.
 */
export function statSignatures(files: readonly string[], racyMarginMs = RACY_MARGIN_MS): Promise<Map<string, FileSignature>> {
  const signatures = new Map<string, FileSignature>();
  // Callbacks, not fs.promises: a resync stats every file of the directory on each change,
  // and a promise per stat costs several times the stat itself on the main thread.
  return new Promise((resolve) => {
    let next = 0;
    let pending = 0;
    const statNext = (): void => {
      if (next >= files.length) {
        if (pending === 0) resolve(signatures);
        return;
      }
      const file = files[next++];
      const startedAt = Date.now();
      pending += 1;
      fs.stat(file, { bigint: true }, (err, stat) => {
        pending -= 1;
        if (!err) signatures.set(file, signatureOf(stat, startedAt - racyMarginMs));
        statNext();
      });
    };
    if (files.length === 0) resolve(signatures);
    for (let i = 0; i < Math.min(STAT_CONCURRENCY, files.length); i++) statNext();
  });
}

function signatureOf(stat: fs.BigIntStats, trustedBefore: number): FileSignature {
  const changedMs = Number((stat.mtimeNs > stat.ctimeNs ? stat.mtimeNs : stat.ctimeNs) / 1_000_000n);
  return {
    value: `${stat.dev}:${stat.ino}:${stat.mode}:${stat.size}:${stat.mtimeNs}:${stat.ctimeNs}`,
    trusted: changedMs < trustedBefore,
  };
}
