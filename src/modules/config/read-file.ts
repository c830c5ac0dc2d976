import { createHash } from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { Readable } from 'node:stream';
import { CONFIG_FILE_MAX_BYTES_SETTING } from './limits';

/** One config file as read from disk. */
export type FileRead =
  /** Its content, at most the size limit. */
  | { kind: 'bytes'; bytes: Buffer; fingerprint: string }
  /** Not read: not a regular file (a FIFO, socket, device, directory or dangling symlink). */
  | { kind: 'skipped'; fingerprint: string; message: string }
  /** Not read: too big, or unreadable. */
  | { kind: 'rejected'; fingerprint: string; message: string }
  /** Vanished between listing and reading. */
  | { kind: 'gone' };

// O_NONBLOCK: opening a FIFO swapped in after the stat must not wait for a writer;
// O_NOCTTY: a terminal device must never become our controlling terminal.
const OPEN_FLAGS = fs.constants.O_RDONLY | fs.constants.O_NONBLOCK | fs.constants.O_NOCTTY;

/**
 * Reads one config file without ever blocking or reading more than `maxBytes` + 1 bytes:
 * only regular files are opened (checked with stat before opening, and again with fstat on
 * the open file, since the path may be swapped in between), and the read is asynchronous.
 */
export async function readConfigFile(file: string, maxBytes: number): Promise<FileRead> {
  let stat: fs.Stats;
  try {
    stat = await fs.promises.stat(file);
  } catch (err) {
    const e = err as NodeJS.ErrnoException;
    if (e.code === 'ENOENT') return danglingLinkOrGone(file);
    if (e.code === 'ELOOP') return { kind: 'skipped', fingerprint: 'symlink-loop', message: 'a symlink loop, not a regular file' };
    return unreadable(e);
  }
  const before = checkRegularAndSize(stat, maxBytes);
  if (before) return before;

  let handle: fs.promises.FileHandle;
  try {
    handle = await fs.promises.open(file, OPEN_FLAGS);
  } catch (err) {
    const e = err as NodeJS.ErrnoException;
    return e.code === 'ENOENT' ? { kind: 'gone' } : unreadable(e);
  }
  try {
    const opened = await handle.stat();
    const after = checkRegularAndSize(opened, maxBytes);
    if (after) return after;
    const bytes = await readAtMost(handle, maxBytes + 1, opened.size);
    // The file grew past the limit after the fstat.
    if (bytes.length > maxBytes) return tooLarge(`more than ${maxBytes}`, maxBytes, `grew:${opened.ino}:${opened.mtimeMs}`);
    return { kind: 'bytes', bytes, fingerprint: createHash('sha256').update(bytes).digest('hex') };
  } catch (err) {
    return unreadable(err as NodeJS.ErrnoException);
  } finally {
    await handle.close().catch(() => undefined);
  }
}

/**
 * Reads a stream (stdin for `meshctl validate -f -`) up to `maxBytes`; rejects with a
 * message naming the limit once it is passed, without buffering the rest.
 */
export function readStreamAtMost(stream: Readable, maxBytes: number): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let length = 0;
    const onData = (chunk: Buffer) => {
      chunks.push(chunk);
      length += chunk.length;
      if (length > maxBytes) {
        stream.off('data', onData);
        stream.destroy();
        reject(new Error(`the input is more than ${maxBytes} bytes, the limit (${CONFIG_FILE_MAX_BYTES_SETTING})`));
      }
    };
    stream.on('data', onData);
    stream.once('error', reject);
    stream.once('end', () => resolve(Buffer.concat(chunks, length)));
  });
}

/** What a file that is not a regular file is, in words; undefined for a regular file. */
export function describeNonRegular(stat: fs.Stats): string | undefined {
  if (stat.isFile()) return undefined;
  if (stat.isFIFO()) return 'a FIFO (named pipe)';
  if (stat.isSocket()) return 'a Unix socket';
  if (stat.isCharacterDevice()) return 'a character device';
  if (stat.isBlockDevice()) return 'a block device';
  if (stat.isDirectory()) return 'a directory';
  return 'not a regular file';
}

function checkRegularAndSize(stat: fs.Stats, maxBytes: number): FileRead | undefined {
  const what = describeNonRegular(stat);
  if (what) return { kind: 'skipped', fingerprint: `${what}:${stat.dev}:${stat.ino}`, message: `${what}, not a regular file` };
  if (stat.size > maxBytes) return tooLarge(String(stat.size), maxBytes, `${stat.ino}:${stat.size}:${stat.mtimeMs}`);
  return undefined;
}

function tooLarge(size: string, maxBytes: number, fingerprint: string): FileRead {
  return { kind: 'rejected', fingerprint: `too-large:${fingerprint}`, message: `the file is ${size} bytes, more than the limit of ${maxBytes} (${CONFIG_FILE_MAX_BYTES_SETTING})` };
}

function unreadable(e: NodeJS.ErrnoException): FileRead {
  return { kind: 'rejected', fingerprint: `unreadable:${e.code ?? e.message}`, message: `cannot read: ${e.message}` };
}

/** stat said ENOENT: either the file vanished, or it is a symlink whose target does not exist. */
async function danglingLinkOrGone(file: string): Promise<FileRead> {
  try {
    const target = await fs.promises.readlink(file);
    const resolved = path.resolve(path.dirname(file), target);
    return { kind: 'skipped', fingerprint: `dangling:${target}`, message: `a dangling symlink to ${resolved} (the target does not exist)` };
  } catch {
    return { kind: 'gone' };
  }
}

/**
 * Reads sequentially until EOF or `limit` bytes. The buffer starts at the size fstat gave
 * (plus one, to see growth) and grows only as the file does, never past `limit`.
 */
async function readAtMost(handle: fs.promises.FileHandle, limit: number, sizeHint: number): Promise<Buffer> {
  let buffer = Buffer.allocUnsafe(Math.min(limit, Math.max(sizeHint + 1, 64 * 1024)));
  let length = 0;
  for (;;) {
    if (length === buffer.length) {
      if (length >= limit) break;
      const grown = Buffer.allocUnsafe(Math.min(limit, buffer.length * 2));
      buffer.copy(grown, 0, 0, length);
      buffer = grown;
    }
    const { bytesRead } = await handle.read(buffer, length, buffer.length - length, null);
    if (bytesRead === 0) break;
    length += bytesRead;
  }
  return buffer.subarray(0, length);
}
