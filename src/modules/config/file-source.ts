import * as fs from 'node:fs';
import * as path from 'node:path';
import { setImmediate as yieldToEventLoop } from 'node:timers/promises';
import type { ScopedLogger } from '../logging';
import { Debouncer } from '../shared/debouncer';
import { DirectoryTreeWatcher } from './dir-watcher';
import { FileSignature, RACY_MARGIN_MS, statSignatures } from './file-signatures';
import { isConfigFileName, isHiddenName, listConfigFiles } from './files';
import { ConfigIssue, formatIssue } from './issues';
import { ConfigFileLimits, DEFAULT_CONFIG_FILE_LIMITS } from './limits';
import { MemoryConfigStore, SourcePart } from './memory-store';
import { ParseResult, validateParsedFile } from './parse';
import { KindRegistry } from './validate';
import { readConfigFile } from './read-file';
import { ConfigResource, resourceKey } from './resource';
import { ConfigChange, summarizeChanges } from './store';
import { WorkerConfigParser } from './worker-parser';

export interface FileConfigSourceOptions {
  /** The watched directory (`--configDir`); read recursively. */
  dir: string;
  /** The kinds documents are validated against (the container's registry). */
  kinds: KindRegistry;
  store: MemoryConfigStore;
  logger: Pick<ScopedLogger, 'debug' | 'info' | 'warn' | 'error'>;
  /** What one file may cost (size, aliases, nesting, documents). Default DEFAULT_CONFIG_FILE_LIMITS. */
  limits?: ConfigFileLimits;
  /** Longest one file may take to parse before it is rejected. Default 30 s. */
  parseTimeoutMs?: number;
  /**
   * Quiet time after the last file event before reading. Default DEFAULT_QUIET_MS (50 ms): long
   * enough for a writer to finish a file, and short enough that the read is done before the
   * push debounce (PILOT_DEBOUNCE_AFTER, 100 ms by default), which counts from the same event
   * (ConfigChange.seenAt), ends: the read then adds nothing to when the push starts.
   */
  debounceMs?: number;
  /** Longest a stream of events can postpone an apply. Default 1 s. */
  maxDebounceMs?: number;
  /** How old a file's last change must be for its stat to stand for its content. Default RACY_MARGIN_MS (2 s). */
  racyMarginMs?: number;
  /** Reads one file; the daemon's is readConfigFile (a test may count the reads). */
  readFile?: typeof readConfigFile;
  /** Re-read interval when the directory cannot be watched (or `poll` is set). Default 1 s. */
  pollMs?: number;
  /** Poll instead of watching, e.g. for file systems without change notification. */
  poll?: boolean;
  /**
   * Once per rejected document issue, rejected file (too big, not text, a limit passed) or
   * skipped file (not a regular file); the daemon counts these in pilot_total_rejected_configs.
   */
  onRejected?: (issue: ConfigIssue) => void;
}

/** One file as the debug page shows it. */
export interface FileStatus {
  file: string;
  /** Resources this file currently contributes (including last good versions kept). */
  resources: number;
  /** The issues of its current content, one per line; absent when it loaded cleanly. */
  lastError?: string;
  /** When its current content was read. */
  lastLoaded: Date;
}

/** What is remembered of one file between reads. */
interface FileState {
  file: string;
  /** Fingerprint of what was last read, good or bad: the same bytes (or the same FIFO) are not handled or reported twice. */
  hash: string;
  /** The stat signature taken before that read, when trusted: while it holds, the file is not read again. */
  signature?: string;
  /** What the file contributes to the store: its last good resources. */
  good: readonly ConfigResource[];
  lastError?: string;
  lastLoaded: Date;
}

/** Issues of one file written to the log at most; the rest are counted and summed up in one line. */
const LOGGED_ISSUES_PER_FILE = 10;

/** Entries named by watch events beyond which a resync lists the whole directory instead of looking at each. */
const MAX_NAMED_ENTRIES = 64;
/** The default quiet time after the last file event before reading (see FileConfigSourceOptions.debounceMs). */
const DEFAULT_QUIET_MS = 50;

/**
 * The `--configDir` source: every config file under a directory, kept in the store as the
 * files change. A bad file or document is rejected alone and the last good version stays
 * served, so a typo never takes configuration away from running proxies. Files are read
 * asynchronously within the size limit and parsed in a worker thread, so no file (huge, a
 * FIFO, an alias bomb) can block the daemon or stop the other files from applying.
 */
export class FileConfigSource {
  private readonly files = new Map<string, FileState>();
  private readonly debouncer: Debouncer<true>;
  private readonly limits: ConfigFileLimits;
  private readonly parser: WorkerConfigParser;
  private stopWatching?: () => void;
  private dirMissing = false;
  private polling = false;
  private treeWatcher: DirectoryTreeWatcher | undefined;
  private started = false;
  /** Resyncs run one after another; one queued resync covers every event before it starts. */
  private chain: Promise<unknown> = Promise.resolve();
  private queued: Promise<ConfigChange[]> | undefined;
  /** A resync once the files just read are older than the racy margin, so their stats become trusted. */
  private settleTimer: NodeJS.Timeout | undefined;
  /** When the last watch event or poll tick not yet read came (see ConfigChange.seenAt). */
  private lastEventAt: number | undefined;
  /** Subdirectories that could not be listed last time, to log the change only. */
  private unreadableDirs = new Set<string>();
  /** Entries watch events named since the last resync began; 'all' when the next one must list the whole directory. */
  private named: Set<string> | 'all' = 'all';

  constructor(private readonly options: FileConfigSourceOptions) {
    this.limits = options.limits ?? DEFAULT_CONFIG_FILE_LIMITS;
    this.parser = new WorkerConfigParser({ limits: this.limits, timeoutMs: options.parseTimeoutMs });
    this.debouncer = new Debouncer<true>(options.debounceMs ?? DEFAULT_QUIET_MS, options.maxDebounceMs ?? 1000, () => true, (_, _first, lastEventAt) => this.resyncFromEvent(lastEventAt));
  }

  /** Loads every file, then watches; resolves once the initial load is in the store. */
  async start(): Promise<void> {
    if (this.started) throw new Error('file config source already started');
    const { dir } = this.options;
    const stat = await fs.promises.stat(dir).catch((err: NodeJS.ErrnoException) => {
      throw new Error(err.code === 'ENOENT' ? `config directory ${dir} does not exist` : `cannot read config directory ${dir}: ${err.message}`);
    });
    if (!stat.isDirectory()) throw new Error(`config directory ${dir} is not a directory`);
    this.started = true;
    // Watch before reading, so a change made during the initial load is not missed.
    this.stopWatching = this.options.poll ? this.startPolling() : this.startWatching();
    try {
      await this.resync();
    } catch (err) {
      this.stop();
      throw new Error(`cannot load config directory ${dir}: ${(err as Error).message}`);
    }
  }

  stop(): void {
    this.stopWatching?.();
    this.stopWatching = undefined;
    this.debouncer.stop();
    if (this.settleTimer) clearTimeout(this.settleTimer);
    this.settleTimer = undefined;
    this.parser.stop();
    this.started = false;
  }

  status(): FileStatus[] {
    return [...this.files.values()]
      .map((s) => ({ file: s.file, resources: s.good.length, lastLoaded: s.lastLoaded, ...(s.lastError ? { lastError: s.lastError } : {}) }))
      .sort((a, b) => (a.file < b.file ? -1 : a.file > b.file ? 1 : 0));
  }

  /**
   * Reads the whole directory and applies what changed as one batch. Unchanged files cost a
   * stat only (their signature still matches the last read). Rejects only when the directory
   * itself cannot be listed.
   */
  resync(): Promise<ConfigChange[]> {
    this.named = 'all';
    return this.queueRead();
  }

  /**
   * Queues a read of what changed: only the files watch events named when they say enough
   * (see namedFiles), so a change to one file of thousands costs that file; the whole
   * directory otherwise. A read of named files is followed by a read of the whole directory
   * once they settle (settleLater), which also catches what a lost event would have missed.
   */
  private queueRead(): Promise<ConfigChange[]> {
    if (this.queued) return this.queued;
    const run = this.chain.then(() => {
      this.queued = undefined;
      return this.readAll();
    });
    this.queued = run;
    this.chain = run.catch(() => undefined);
    return run;
  }

  private async readAll(): Promise<ConfigChange[]> {
    if (!this.started) return [];
    // Everything this read applies happened by the last event seen so far.
    const seenAt = this.lastEventAt;
    this.lastEventAt = undefined;
    const named = this.named;
    this.named = new Set();
    const namedFiles = named === 'all' ? undefined : await this.namedFiles(named);
    const listing = namedFiles ? undefined : await listConfigFiles(this.options.dir);
    const files = namedFiles ?? listing!.files;
    this.options.logger.debug(namedFiles ? `config resync: looking at ${files.length} named file(s)` : `config resync: listed ${files.length} files`);
    const signatures = await statSignatures(files, this.options.racyMarginMs);
    if (!this.started) return [];
    let untrusted = 0;
    const batch: SourcePart[] = [];
    const present = new Set<string>();
    for (const file of files) {
      const sourceId = this.sourceIdOf(file);
      const signature = signatures.get(file);
      if (signature && this.files.get(sourceId)?.signature === signature.value) {
        present.add(sourceId);
        continue;
      }
      if (signature && !signature.trusted) untrusted++;
      const part = await this.read(sourceId, file, signature);
      if (!this.started) return [];
      if (part === 'gone') continue;
      present.add(sourceId);
      if (part) batch.push(part);
      // Fair to /ready and xDS however many files there are.
      await yieldToEventLoop();
    }
    // A listing says what is gone; named files are gone when they were not found.
    if (listing) this.noteUnreadableDirs(listing.unreadableDirs, present);
    const looked = listing ? this.files.keys() : files.map((f) => this.sourceIdOf(f));
    for (const sourceId of [...looked]) {
      const state = this.files.get(sourceId);
      if (!state || present.has(sourceId)) continue;
      this.files.delete(sourceId);
      batch.push({ sourceId, resources: null });
      this.options.logger.info(`config file ${state.file} removed`);
    }
    if (untrusted || namedFiles) this.settleLater();
    const changes = this.options.store.applyBatch(batch, seenAt);
    if (changes.length) this.options.logger.info(`config changed: ${summarizeChanges(changes)}`, { files: batch.map((p) => p.sourceId) });
    return changes;
  }

  /**
   * Files changed moments before they were read are read again on every resync until their
   * change is older than the racy margin. One quiet resync after the margin does that once,
   * so the next real change (a config generated just before start, a burst of edits) reads
   * only what it changed.
   */
  private settleLater(): void {
    if (this.settleTimer) return;
    this.settleTimer = setTimeout(() => {
      this.settleTimer = undefined;
      this.named = 'all';
      if (this.started) this.resyncFromEvent();
    }, (this.options.racyMarginMs ?? RACY_MARGIN_MS) + 100);
    this.settleTimer.unref();
  }

  private sourceIdOf(file: string): string {
    return path.relative(this.options.dir, file).split(path.sep).join('/');
  }

  /**
   * The config files among the entries watch events named, or undefined when only a listing
   * of the whole directory can tell what changed: the directory itself is not there, an
   * event named nothing or something outside it, a directory came or went, a hidden entry
   * that is not a plain file changed (a volume mount's `..data` link swapped: every file
   * behind it may read differently now), or an entry could not be looked at. Plain hidden
   * files (an editor's temporary copy) and what is inside hidden directories are never config.
   */
  private async namedFiles(entries: ReadonlySet<string>): Promise<string[] | undefined> {
    const root = this.options.dir;
    if (entries.size > MAX_NAMED_ENTRIES) return undefined;
    const top = await lookAt(root, fs.promises.stat);
    if (typeof top === 'string' || !top.isDirectory()) return undefined;
    const files: string[] = [];
    for (const entry of entries) {
      const parts = path.relative(root, entry).split(path.sep);
      if (parts[0] === '' || parts[0] === '..' || path.isAbsolute(parts[0])) return undefined;
      if (parts.slice(0, -1).some(isHiddenName)) continue;
      const name = parts[parts.length - 1];
      const found = await lookAt(entry, fs.promises.lstat);
      if (found === 'unknown') return undefined;
      if (isHiddenName(name)) {
        if (found === 'missing' || found.isFile()) continue;
        return undefined;
      }
      if (found === 'missing') {
        // A file that went is read as gone; a directory that went takes its files along.
        const sourceId = this.sourceIdOf(entry);
        if (this.files.has(sourceId)) files.push(entry);
        else if (this.hasFilesUnder(sourceId)) return undefined;
        continue;
      }
      if (found.isDirectory()) return undefined;
      if (found.isSymbolicLink()) {
        const target = await lookAt(entry, fs.promises.stat);
        if (target === 'unknown' || (target !== 'missing' && target.isDirectory())) return undefined;
      }
      if (isConfigFileName(name)) files.push(entry);
    }
    return files.sort((a, b) => a.localeCompare(b));
  }

  private hasFilesUnder(sourceId: string): boolean {
    const prefix = `${sourceId}/`;
    for (const known of this.files.keys()) if (known.startsWith(prefix)) return true;
    return false;
  }

  /** The files of a subdirectory that cannot be listed are unknown, not removed: they keep what they gave. */
  private noteUnreadableDirs(dirs: readonly { dir: string; message: string }[], present: Set<string>): void {
    const now = new Set(dirs.map((d) => d.dir));
    for (const { dir, message } of dirs) {
      if (!this.unreadableDirs.has(dir)) this.options.logger.warn(`cannot list config directory ${dir} (${message}); its files keep their last good versions`);
      const prefix = `${this.sourceIdOf(dir)}/`;
      for (const sourceId of this.files.keys()) if (sourceId.startsWith(prefix)) present.add(sourceId);
    }
    for (const dir of this.unreadableDirs) if (!now.has(dir)) this.options.logger.info(`config directory ${dir} can be listed again`);
    this.unreadableDirs = now;
  }

  /** The part to apply for one file, undefined when nothing changed, 'gone' if it vanished meanwhile. */
  private async read(sourceId: string, file: string, stat: FileSignature | undefined): Promise<SourcePart | undefined | 'gone'> {
    const prev = this.files.get(sourceId);
    const read = await (this.options.readFile ?? readConfigFile)(file, this.limits.maxBytes);
    const signature = stat?.trusted ? stat.value : undefined;
    switch (read.kind) {
      case 'gone':
        return 'gone';
      case 'skipped':
        return this.reject(sourceId, file, prev, read.fingerprint, [{ location: { file }, message: read.message }], 'skipped', signature);
      case 'rejected':
        return this.reject(sourceId, file, prev, read.fingerprint, [{ location: { file }, message: read.message }], 'rejected', signature);
    }
    if (prev?.hash === read.fingerprint) {
      prev.signature = signature; // touched, not changed
      return undefined;
    }
    // Parsed in the worker (which validates the built-in kinds too), the rest validated here against the kinds the container bound.
    const parsed = validateParsedFile(file, await this.parser.parse(file, read.bytes, this.options.kinds), this.options.kinds);
    if (!this.started) return undefined;
    if (parsed.fileRejected) return this.reject(sourceId, file, prev, read.fingerprint, parsed.issues, 'rejected', signature);

    const { resources, kept } = withLastGood(parsed, prev?.good ?? []);
    this.files.set(sourceId, { file, hash: read.fingerprint, signature, good: resources, lastLoaded: new Date(), lastError: joinIssues(parsed.issues) });
    if (resources.length === 0 && parsed.issues.length === 0) this.noteEmpty(file, prev?.good.length ?? 0);
    this.reportAll(parsed.issues, (issue) => {
      const key = identityOf(issue);
      return key && kept.has(key) ? `keeping the last good version of ${key}` : undefined;
    });
    this.options.logger.debug(`loaded ${file}`, { resources: resources.length, rejected: parsed.issues.length });
    return { sourceId, resources };
  }

  /** The whole file is rejected (or skipped): its last good resources stay as they are. */
  private reject(sourceId: string, file: string, prev: FileState | undefined, hash: string, issues: ConfigIssue[], how: 'rejected' | 'skipped', signature: string | undefined): undefined {
    if (prev?.hash === hash) {
      prev.signature = signature; // the same failure again: reported already
      return undefined;
    }
    const good = prev?.good ?? [];
    this.files.set(sourceId, { file, hash, signature, good, lastLoaded: new Date(), lastError: joinIssues(issues) });
    const note = good.length ? `keeping the file's last good version (${good.length} resource${good.length === 1 ? '' : 's'})` : 'nothing from this file is served';
    if (how === 'skipped') {
      this.options.logger.warn(`skipping config file ${file}: ${issues[0].message}; ${note}`);
      this.options.onRejected?.(issues[0]);
      return undefined;
    }
    this.reportAll(issues, () => note);
    return undefined;
  }

  /** An empty file is applied (it declares nothing), but never silently: it may be a truncated write. */
  private noteEmpty(file: string, removed: number): void {
    const gone = removed ? `; its ${removed} resource${removed === 1 ? ' was' : 's were'} removed` : '';
    this.options.logger.warn(`config file ${file} is empty: it declares no resources${gone}`);
  }

  /** Each issue counted; the first few logged, the rest summed up in one line so a bad file cannot flood the log. */
  private reportAll(issues: readonly ConfigIssue[], noteFor: (issue: ConfigIssue) => string | undefined): void {
    issues.forEach((issue, i) => {
      if (i < LOGGED_ISSUES_PER_FILE) {
        const note = noteFor(issue);
        this.options.logger.error(`rejected config: ${formatIssue(issue)}${note ? `; ${note}` : ''}`);
      }
      this.options.onRejected?.(issue);
    });
    const more = issues.length - LOGGED_ISSUES_PER_FILE;
    if (more > 0) this.options.logger.error(`rejected config: ${issues[0].location.file}: ${more} more rejected document issues not shown (meshctl validate -f lists them all)`);
  }

  /**
   * From a watch event or poll tick (`lastEventAt`: when the last one came, after this
   * source's own debounce), or a settle timer: failures are logged, the last config stays.
   */
  private resyncFromEvent(lastEventAt?: number): void {
    if (lastEventAt !== undefined) this.lastEventAt = Math.max(this.lastEventAt ?? 0, lastEventAt);
    const listsAll = this.named === 'all';
    this.queueRead().then(
      () => {
        // Only a listing can have found a new subdirectory to watch (a named one makes it list).
        if (listsAll) this.treeWatcher?.refresh();
        if (this.dirMissing) this.options.logger.info(`config directory ${this.options.dir} is back`);
        this.dirMissing = false;
      },
      (err: Error) => {
        if (!this.started) return;
        if (!fs.existsSync(this.options.dir)) {
          if (!this.dirMissing) this.options.logger.error(`config directory ${this.options.dir} disappeared; keeping the last loaded config until it is back`);
          this.dirMissing = true;
          // The watch followed the old directory: only polling can see a new one appear.
          this.fallBackToPolling();
        } else {
          this.options.logger.warn(`cannot list config directory ${this.options.dir}: ${err.message}`);
        }
      },
    );
  }

  private startWatching(): () => void {
    const watcher = new DirectoryTreeWatcher(
      this.options.dir,
      (entry) => this.onEvent(entry),
      (err) => {
        this.options.logger.warn(`watching ${this.options.dir} failed (${err.message}); polling every ${this.pollMs()} ms`);
        this.fallBackToPolling();
      },
    );
    try {
      watcher.start();
    } catch (err) {
      this.options.logger.warn(`cannot watch ${this.options.dir} (${(err as Error).message}); polling every ${this.pollMs()} ms`);
      return this.startPolling();
    }
    this.treeWatcher = watcher;
    return () => {
      watcher.close();
      this.treeWatcher = undefined;
    };
  }

  /**
   * A watch event naming `entry` (undefined: it named nothing). The parser's worker starts
   * while the debounce waits, so a change is not held up by its boot.
   */
  private onEvent(entry: string | undefined): void {
    if (entry === undefined || this.named === 'all') this.named = 'all';
    else this.named.add(entry);
    this.parser.warm();
    this.debouncer.add(true);
  }

  private fallBackToPolling(): void {
    if (!this.started || this.polling) return;
    this.stopWatching?.();
    this.stopWatching = this.startPolling();
  }

  private startPolling(): () => void {
    const timer = setInterval(() => {
      this.named = 'all';
      this.debouncer.add(true);
    }, this.pollMs());
    this.polling = true;
    return () => {
      clearInterval(timer);
      this.polling = false;
    };
  }

  private pollMs(): number {
    return this.options.pollMs ?? 1000;
  }
}

/**
 * The good documents of a file, plus the last good version of each resource whose document
 * is now rejected but still names it: a bad edit to one resource leaves it as it was.
 */
function withLastGood(parsed: ParseResult, lastGood: readonly ConfigResource[]): { resources: ConfigResource[]; kept: Set<string> } {
  const resources = parsed.resources.map((p) => p.resource);
  const keys = new Set(resources.map(resourceKey));
  const previous = new Map(lastGood.map((r) => [resourceKey(r), r]));
  const kept = new Set<string>();
  for (const issue of parsed.issues) {
    const key = identityOf(issue);
    const old = key && previous.get(key);
    if (!key || !old || keys.has(key)) continue;
    resources.push(old);
    keys.add(key);
    kept.add(key);
  }
  return { resources, kept };
}

/** `Kind/namespace/name` of a rejected document, when it could be read. */
function identityOf(issue: ConfigIssue): string | undefined {
  return issue.kind && issue.name ? `${issue.kind}/${issue.namespace ?? 'default'}/${issue.name}` : undefined;
}

function joinIssues(issues: readonly ConfigIssue[]): string | undefined {
  if (!issues.length) return undefined;
  const shown = issues.slice(0, LOGGED_ISSUES_PER_FILE).map(formatIssue);
  if (issues.length > shown.length) shown.push(`... and ${issues.length - shown.length} more`);
  return shown.join('\n');
}

/** A stat of `file`: 'missing' when nothing is there, 'unknown' when it cannot be looked at. */
async function lookAt(file: string, how: (file: string) => Promise<fs.Stats>): Promise<fs.Stats | 'missing' | 'unknown'> {
  try {
    return await how(file);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    return code === 'ENOENT' || code === 'ENOTDIR' ? 'missing' : 'unknown';
  }
}
