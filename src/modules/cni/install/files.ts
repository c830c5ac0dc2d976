import { randomBytes } from 'node:crypto';
import * as fs from 'node:fs/promises';
import * as path from 'node:path';

/**
 * Writes `file` so readers see the old content or the new, never a part: a temporary file in
 * the same directory (named `.<name>.<pid>.<random>.tmp`, which no CNI runtime reads), then a
 * rename over it. The mode is set with chmod after creation, so the process umask cannot narrow
 * or widen it.
 */
export async function writeFileAtomic(file: string, data: string, mode: number): Promise<void> {
  const tmp = path.join(path.dirname(file), `.${path.basename(file)}.${process.pid}.${randomBytes(4).toString('hex')}.tmp`);
  let handle: fs.FileHandle | undefined;
  try {
    handle = await fs.open(tmp, 'wx', mode);
    await handle.writeFile(data);
    await handle.chmod(mode);
    await handle.sync();
    await handle.close();
    handle = undefined;
    await fs.rename(tmp, file);
  } catch (err) {
    await handle?.close().catch(() => undefined);
    await fs.rm(tmp, { force: true }).catch(() => undefined);
    throw err;
  }
}

/** The file's text and permission bits, or undefined when it does not exist. */
export async function readFileState(file: string): Promise<{ text: string; mode: number } | undefined> {
  try {
    const [text, stat] = await Promise.all([fs.readFile(file, 'utf8'), fs.stat(file)]);
    return { text, mode: stat.mode & 0o7777 };
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw err;
  }
}

/**
 * Makes `file` hold exactly `data` with `mode`, writing (atomically) only when it differs, so a
 * periodic check does not churn files other node agents may watch.
 * @returns true when it wrote.
 */
export async function ensureFile(file: string, data: string, mode: number): Promise<boolean> {
  const current = await readFileState(file);
  if (current && current.text === data && current.mode === mode) return false;
  await fs.mkdir(path.dirname(file), { recursive: true });
  await writeFileAtomic(file, data, mode);
  return true;
}

/** Removes `file`; true when it existed. */
export async function removeFile(file: string): Promise<boolean> {
  try {
    await fs.unlink(file);
    return true;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return false;
    throw err;
  }
}
