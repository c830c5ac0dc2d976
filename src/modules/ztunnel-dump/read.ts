import * as fs from 'node:fs';
import type { Readable } from 'node:stream';
import { readConfigFile, readStreamAtMost } from '../config';
import { UserError } from '../shared/user-error';
import { toZtunnelDump, ZtunnelDump } from './dump';

/**
 * The largest dump read, from a file or a ztunnel. A node proxy of a cluster with tens of
 * thousands of pods serves some tens of MiB; past this, parsing alone would take seconds and
 * gigabytes.
 */
export const MAX_ZTUNNEL_DUMP_BYTES = 128 * 1024 * 1024;

/** Parses dump bytes (a file's or a ztunnel's answer); `source` names where they came from. */
export function parseZtunnelDump(bytes: Buffer, source: string, maxBytes = MAX_ZTUNNEL_DUMP_BYTES): ZtunnelDump {
  if (bytes.length > maxBytes) throw new UserError(`${source} is ${bytes.length} bytes, more than the limit of ${maxBytes}`);
  let data: unknown;
  try {
    data = JSON.parse(bytes.toString('utf8'));
  } catch (err) {
    const reason = err instanceof RangeError ? 'it is nested too deeply' : (err as Error).message.split('\n')[0];
    throw new UserError(`${source} is not valid JSON: ${reason}`);
  }
  return toZtunnelDump(data, source);
}

/**
 * Reads a saved dump (`--file`; `-` is standard input): only a regular file, at most `maxBytes`, never blocking on a
 * FIFO or device; every failure is one line naming the file.
 */
export async function readZtunnelDumpFile(file: string, maxBytes = MAX_ZTUNNEL_DUMP_BYTES, stdin: NodeJS.ReadableStream = process.stdin): Promise<ZtunnelDump> {
  if (file === '-') return readZtunnelDumpStdin(stdin as Readable, maxBytes);
  const source = `ztunnel config dump ${file}`;
  // Checked here first so the message names this limit (the shared reader's names a setting).
  const size = await fs.promises.stat(file).then(
    (s) => (s.isFile() ? s.size : 0),
    () => 0,
  );
  if (size > maxBytes) throw new UserError(`cannot read ${source}: it is ${size} bytes, more than the limit of ${maxBytes}`);
  const read = await readConfigFile(file, maxBytes);
  switch (read.kind) {
    case 'bytes':
      return parseZtunnelDump(read.bytes, source, maxBytes);
    case 'gone':
      throw new UserError(`cannot read ${source}: no such file`);
    case 'skipped':
      throw new UserError(`cannot read ${source}: it is ${read.message}`);
    case 'rejected':
      throw new UserError(`cannot read ${source}: ${read.message.replace(/^cannot read: /, '')}`);
  }
}

/** `--file -`: the dump piped in (`kubectl exec <ztunnel> -- curl -s localhost:15000/config_dump | ...`), at most `maxBytes`. */
async function readZtunnelDumpStdin(stdin: Readable, maxBytes: number): Promise<ZtunnelDump> {
  const source = 'the ztunnel config dump on standard input';
  let bytes: Buffer;
  try {
    bytes = await readStreamAtMost(stdin, maxBytes);
  } catch (err) {
    const message = (err as Error).message;
    throw new UserError(/more than/.test(message) ? `${source} is more than the limit of ${maxBytes} bytes` : `cannot read ${source}: ${message}`);
  }
  return parseZtunnelDump(bytes, source, maxBytes);
}
