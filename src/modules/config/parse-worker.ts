import 'reflect-metadata';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { parentPort } from 'node:worker_threads';
import { ConfigFileLimits } from './limits';
import { KINDS } from './kinds';
import { DocumentOutcome, parseConfigDocuments, ParsedDocument, ParsedFile, validateParsedDocument } from './parse';
import { KindRegistry } from './validate';

/** What WorkerConfigParser sends: one file's bytes. */
export interface ParseRequest {
  id: number;
  file: string;
  bytes: Uint8Array;
  limits: ConfigFileLimits;
  /**
   * Built-in kinds the daemon validates as they are (no plugin replaced them): their documents
   * are validated here, so the main thread receives resources and issues, not the document
   * model and the line of every field.
   */
  validateKinds: string[];
}

/** A parsed file as it crosses to the main thread: a document validated here, or the document with its field lines as their one text. */
export type WireParsedFile = Omit<ParsedFile, 'documents'> & {
  documents: ((Omit<ParsedDocument, 'fieldLines'> & { fieldLines: string }) | { documentIndex: number; outcome: DocumentOutcome })[];
};

export type ParseReply = { id: number; result: WireParsedFile } | { id: number; error: string };

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
      reply = { id: request.id, result: parseAndValidate(request) };
    } catch (err) {
      reply = { id: request.id, error: (err as Error).message };
    }
    port.postMessage(reply);
  });
}

const BUILT_IN_KINDS = new KindRegistry(KINDS);

function parseAndValidate(request: ParseRequest): WireParsedFile {
  const parsed = parseConfigDocuments(request.file, request.bytes, request.limits);
  const validateHere = new Set(request.validateKinds);
  const documents = parsed.documents.map((doc) => {
    const kind = (doc.value as { kind?: unknown } | null)?.kind;
    if (typeof kind === 'string' && validateHere.has(kind)) return { documentIndex: doc.documentIndex, outcome: validateParsedDocument(request.file, doc, BUILT_IN_KINDS) };
    return { ...doc, fieldLines: doc.fieldLines.encoded };
  });
  return { ...parsed, documents };
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
