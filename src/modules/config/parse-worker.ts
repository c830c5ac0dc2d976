import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { parentPort } from 'node:worker_threads';
import { ConfigFileLimits } from './limits';
import { parseConfigDocuments, ParsedFile } from './parse';

/** What WorkerConfigParser sends: one file's bytes. */
export interface ParseRequest {
  id: number;
  file: string;
  bytes: Uint8Array;
  limits: ConfigFileLimits;
}

export type ParseReply = { id: number; result: ParsedFile } | { id: number; error: string };

/**
 * The worker thread of WorkerConfigParser: parses files off the daemon's event loop, within
 * the file limits, into plain documents with the line of each field. Validation stays on the
 * main thread, against the kinds the container bound (plugins may add some).
 */
if (parentPort) {
  yieldCpuToTheEventLoop();
  const port = parentPort;
  port.on('message', (request: ParseRequest) => {
    let reply: ParseReply;
    try {
      reply = { id: request.id, result: parseConfigDocuments(request.file, request.bytes, request.limits) };
    } catch (err) {
      reply = { id: request.id, error: (err as Error).message };
    }
    port.postMessage(reply);
  });
}

/**
 * Parsing is background work: on a busy machine the daemon's event loop (xDS, /ready) should
 * get the CPU first. Linux sets priorities per thread; /proc/thread-self names this one.
 */
function yieldCpuToTheEventLoop(): void {
  try {
    const threadId = Number(path.basename(fs.readlinkSync('/proc/thread-self')));
    os.setPriority(threadId, Math.min(19, os.getPriority(threadId) + 10));
  } catch {
    // Not Linux, or not allowed: the parse still runs, at the same priority.
  }
}
