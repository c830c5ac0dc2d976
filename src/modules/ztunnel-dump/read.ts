import * as fs from 'node:fs';
import { readConfigFile } from '../config';
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
 * Reads a saved dump (`--file`): only a regular file, at most `maxBytes`, never blocking on a
 * FIFO or device; every failure is one line naming the file.
 */
export async function readZtunnelDumpFile(file: string, maxBytes = MAX_ZTUNNEL_DUMP_BYTES): Promise<ZtunnelDump> {
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
