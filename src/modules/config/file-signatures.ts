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
export async function statSignatures(files: readonly string[], racyMarginMs = RACY_MARGIN_MS): Promise<Map<string, FileSignature>> {
  const signatures = new Map<string, FileSignature>();
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < files.length) {
      const file = files[next++];
      const startedAt = Date.now();
      const stat = await fs.promises.stat(file, { bigint: true }).catch(() => undefined);
      if (stat) signatures.set(file, signatureOf(stat, startedAt - racyMarginMs));
    }
  };
  await Promise.all(Array.from({ length: Math.min(STAT_CONCURRENCY, files.length) }, worker));
  return signatures;
}

function signatureOf(stat: fs.BigIntStats, trustedBefore: number): FileSignature {
  const changedMs = Number((stat.mtimeNs > stat.ctimeNs ? stat.mtimeNs : stat.ctimeNs) / 1_000_000n);
  return {
    value: `${stat.dev}:${stat.ino}:${stat.mode}:${stat.size}:${stat.mtimeNs}:${stat.ctimeNs}`,
    trusted: changedMs < trustedBefore,
  };
}
