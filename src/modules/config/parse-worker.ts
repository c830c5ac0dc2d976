import 'reflect-metadata';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { parentPort } from 'node:worker_threads';
import { KINDS } from './kinds';
import { ConfigFileLimits } from './limits';
import { parseConfigBytes, ParseResult } from './parse';
import { KindRegistry } from './validate';

/** What WorkerConfigParser sends: one file's bytes. */
export interface ParseRequest {
  id: number;
  file: string;
  bytes: Uint8Array;
  limits: ConfigFileLimits;
}

export type ParseReply = { id: number; result: ParseResult } | { id: number; error: string };

/**
 * The worker thread of WorkerConfigParser: parses and validates files off the daemon's event
 * loop. It validates against the built-in kinds, the registry configModule binds; resources
 * come back as plain data (no kind class has behaviour, only shape).
 */
if (parentPort) {
  yieldCpuToTheEventLoop();
  const port = parentPort;
  const kinds = new KindRegistry(KINDS);
  port.on('message', (request: ParseRequest) => {
    let reply: ParseReply;
    try {
      reply = { id: request.id, result: parseConfigBytes(request.file, request.bytes, kinds, request.limits) };
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
