import 'reflect-metadata';
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
