import * as path from 'node:path';
import { Worker } from 'node:worker_threads';
import { ConfigFileLimits } from './limits';
import { KINDS } from './kinds';
import { ParsedFile, PartlyValidatedFile } from './parse';
import { KindRegistry } from './validate';
import type { ParseReply, ParseRequest, WireParsedFile } from './parse-worker';
import { FieldLines } from './field-lines';

export interface WorkerConfigParserOptions {
  limits: ConfigFileLimits;
  /** Longest one file may take to parse; the worker is then stopped and the file rejected. Default 30 s. */
  timeoutMs?: number;
  /**
   * The worker stops after this long without work, handing its memory back. Default 30 s
   * (config changes come in bursts, and starting the worker costs ~0.15 s of CPU), 2 s after
   * a file of more than 1 MiB (its parse may have grown the worker's heap by hundreds of MiB).
   */
  idleMs?: number;
  /** The worker's heap; by default room for the largest file the limits allow. */
  maxHeapMb?: number;
}

const MIB = 1024 * 1024;
const IDLE_MS = 30_000;
const SHORT_IDLE_MS = 2_000;
const LARGE_INPUT_BYTES = MIB;

/**
 * Parses config files in a worker thread, one at a time, so a large or hostile file never
 * blocks the daemon's event loop (/ready, xDS): the YAML library needs seconds and ~100 bytes
 * of heap per input byte for a file of a few MiB. The worker's heap is capped; running out of
 * it, or of time, rejects that file and the next file gets a fresh worker.
 */
export class WorkerConfigParser {
  private worker: Worker | undefined;
  private idleTimer: NodeJS.Timeout | undefined;
  private queue: Promise<unknown> = Promise.resolve();
  private nextId = 0;
  /** Ends the parse in flight, if any, with the given issue. */
  private endInFlight: ((message: string) => void) | undefined;
  private readonly heapMb: number;

  constructor(private readonly options: WorkerConfigParserOptions) {
    // The YAML document model takes up to ~170 bytes per input byte; room for that, plus the worker's own.
    this.heapMb = options.maxHeapMb ?? 128 + 200 * Math.ceil(options.limits.maxBytes / MIB);
  }

  /**
   * Parses one file's bytes; never rejects: every failure is an issue of that file. Documents
   * of the built-in kinds that `kinds` has as built (no plugin replaced them) come back
   * validated; validateParsedFile validates the rest against `kinds`.
   */
  parse(file: string, bytes: Uint8Array, kinds?: KindRegistry): Promise<PartlyValidatedFile> {
    const validateKinds = kinds ? builtInKindsOf(kinds) : [];
    const run = this.queue.then(() => this.run(file, bytes, validateKinds));
    this.queue = run;
    return run;
  }

  /**
   * Starts the worker if none runs (it stops again after idleMs without work): a caller that
   * knows files are coming pays the worker's start-up (~0.1 s of module loading) while it waits.
   */
  warm(): void {
    if (this.worker) return;
    this.worker = this.startWorker();
    this.armIdleTimer();
  }

  /** Stops the worker now: a parse in flight ends with an issue; a later parse starts a new worker. */
  stop(): void {
    // Said here, not left to the worker's exit code: a worker stopped while still starting exits with 0.
    this.endInFlight?.('the parser was stopped');
    this.stopWorker();
  }

  private run(file: string, bytes: Uint8Array, validateKinds: string[]): Promise<PartlyValidatedFile> {
    if (this.idleTimer) clearTimeout(this.idleTimer);
    const worker = (this.worker ??= this.startWorker());
    const timeoutMs = this.options.timeoutMs ?? 30_000;
    return new Promise<PartlyValidatedFile>((resolve) => {
      const id = ++this.nextId;
      const finish = (result: PartlyValidatedFile, workerFailed = false) => {
        clearTimeout(timer);
        this.endInFlight = undefined;
        worker.off('message', onMessage);
        worker.off('error', onError);
        worker.off('exit', onExit);
        if (workerFailed) this.stopWorker();
        else this.armIdleTimer(bytes.length > LARGE_INPUT_BYTES ? SHORT_IDLE_MS : undefined);
        resolve(result);
      };
      const onMessage = (reply: ParseReply) => {
        if (reply.id !== id) return;
        finish('error' in reply ? fileIssue(file, `cannot parse: ${reply.error}`) : fromWire(reply.result));
      };
      const onError = (err: Error & { code?: string }) => {
        const message = err.code === 'ERR_WORKER_OUT_OF_MEMORY' ? `parsing needs more than ${this.heapMb} MiB of memory (the limit for files of this size)` : `the parser failed: ${err.message}`;
        finish(fileIssue(file, message), true);
      };
      const onExit = (code: number) => finish(fileIssue(file, `the parser stopped (exit code ${code})`), true);
      const timer = setTimeout(() => finish(fileIssue(file, `parsing took longer than ${timeoutMs} ms (the limit)`), true), timeoutMs);
      this.endInFlight = (message) => finish(fileIssue(file, message), true);
      worker.on('message', onMessage);
      worker.once('error', onError);
      worker.once('exit', onExit);
      const request: ParseRequest = { id, file, bytes, limits: this.options.limits, validateKinds };
      worker.postMessage(request);
    });
  }

  private startWorker(): Worker {
    const worker = new Worker(path.join(__dirname, 'parse-worker.js'), {
      resourceLimits: { maxOldGenerationSizeMb: this.heapMb },
    });
    // An idle worker must never keep a process alive.
    worker.unref();
    return worker;
  }

  private armIdleTimer(afterLargeInput?: number): void {
    if (this.idleTimer) clearTimeout(this.idleTimer);
    this.idleTimer = setTimeout(() => this.stopWorker(), this.options.idleMs ?? afterLargeInput ?? IDLE_MS);
    this.idleTimer.unref();
  }

  private stopWorker(): void {
    if (this.idleTimer) clearTimeout(this.idleTimer);
    this.idleTimer = undefined;
    const worker = this.worker;
    this.worker = undefined;
    void worker?.terminate();
  }
}

function fromWire(parsed: WireParsedFile): PartlyValidatedFile {
  return { ...parsed, documents: parsed.documents.map((d) => ('outcome' in d ? d : { ...d, fieldLines: new FieldLines(d.fieldLines) })) };
}

const builtInKindNames = new WeakMap<KindRegistry, string[]>();

/** The built-in kinds a registry has as built: what the parse worker, which knows only those, may validate. */
function builtInKindsOf(kinds: KindRegistry): string[] {
  let names = builtInKindNames.get(kinds);
  if (!names) {
    names = KINDS.filter((def) => kinds.kindNamed(def.kind) === def).map((def) => def.kind);
    builtInKindNames.set(kinds, names);
  }
  return names;
}

function fileIssue(file: string, message: string): ParsedFile {
  return { documents: [], issues: [{ location: { file }, message }], fileRejected: true };
}
