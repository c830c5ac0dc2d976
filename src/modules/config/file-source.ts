import { createHash } from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { ScopedLogger } from '../logging';
import { Debouncer } from '../shared/debouncer';
import { DirectoryTreeWatcher } from './dir-watcher';
import { configFilesUnder } from './files';
import { ConfigIssue, formatIssue } from './issues';
import { MemoryConfigStore, SourcePart } from './memory-store';
import { parseConfigText, ParseResult } from './parse';
import { ConfigResource, resourceKey } from './resource';
import { ConfigChange } from './store';
import { KindRegistry } from './validate';

export interface FileConfigSourceOptions {
  /** The watched directory (`--configDir`); read recursively. */
  dir: string;
  kinds: KindRegistry;
  store: MemoryConfigStore;
  logger: Pick<ScopedLogger, 'debug' | 'info' | 'warn' | 'error'>;
  /** Quiet time after the last file event before applying. Default 100 ms. */
  debounceMs?: number;
  /** Longest a stream of events can postpone an apply. Default 1 s. */
  maxDebounceMs?: number;
  /** Re-read interval when the directory cannot be watched (or `poll` is set). Default 1 s. */
  pollMs?: number;
  /** Poll instead of watching, e.g. for file systems without change notification. */
  poll?: boolean;
  /** Once per rejected document issue or unreadable file; the daemon counts these in pilot_total_rejected_configs. */
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
  /** Hash of the content last read, good or bad: the same bytes are not parsed or reported twice. */
  hash: string;
  /** What the file contributes to the store: its last good resources. */
  good: readonly ConfigResource[];
  lastError?: string;
  lastLoaded: Date;
}

/**
 * The `--configDir` source: every config file under a directory, kept in the store as the
 * files change. A bad file or document is rejected alone and the last good version stays
 * served, so a typo never takes configuration away from running proxies.
 */
export class FileConfigSource {
  private readonly files = new Map<string, FileState>();
  private readonly debouncer: Debouncer<true>;
  private stopWatching?: () => void;
  private dirMissing = false;
  private polling = false;
  private treeWatcher: DirectoryTreeWatcher | undefined;
  private started = false;

  constructor(private readonly options: FileConfigSourceOptions) {
    this.debouncer = new Debouncer<true>(options.debounceMs ?? 100, options.maxDebounceMs ?? 1000, () => true, () => this.resyncFromEvent());
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
      this.resync();
    } catch (err) {
      this.stop();
      throw new Error(`cannot load config directory ${dir}: ${(err as Error).message}`);
    }
  }

  stop(): void {
    this.stopWatching?.();
    this.stopWatching = undefined;
    this.debouncer.stop();
    this.started = false;
  }

  status(): FileStatus[] {
    return [...this.files.values()]
      .map((s) => ({ file: s.file, resources: s.good.length, lastLoaded: s.lastLoaded, ...(s.lastError ? { lastError: s.lastError } : {}) }))
      .sort((a, b) => (a.file < b.file ? -1 : a.file > b.file ? 1 : 0));
  }

  /**
   * Reads the directory now and applies what changed as one batch. Every event leads here,
   * whatever file it names: event names are unreliable (new subdirectories, symlink swaps of
   * mounted volumes), and unchanged files cost a read and a hash only.
   */
  resync(): ConfigChange[] {
    const files = configFilesUnder(this.options.dir);
    const batch: SourcePart[] = [];
    const present = new Set<string>();
    for (const file of files) {
      const sourceId = path.relative(this.options.dir, file).split(path.sep).join('/');
      const read = this.read(sourceId, file);
      if (read === 'gone') continue;
      present.add(sourceId);
      if (read) batch.push(read);
    }
    for (const [sourceId, state] of this.files) {
      if (present.has(sourceId)) continue;
      this.files.delete(sourceId);
      batch.push({ sourceId, resources: null });
      this.options.logger.info(`config file ${state.file} removed`);
    }
    const changes = this.options.store.applyBatch(batch);
    if (changes.length) this.options.logger.info(`config changed: ${summary(changes)}`, { files: batch.map((p) => p.sourceId) });
    return changes;
  }

  /** The part to apply for one file, undefined when nothing changed, 'gone' if it vanished meanwhile. */
  private read(sourceId: string, file: string): SourcePart | undefined | 'gone' {
    const prev = this.files.get(sourceId);
    let text: string;
    try {
      text = fs.readFileSync(file, 'utf8');
    } catch (err) {
      const e = err as NodeJS.ErrnoException;
      if (e.code === 'ENOENT') return 'gone';
      // Unreadable for now (permissions, a directory named x.yaml): keep what it gave before.
      return this.reject(sourceId, file, prev, `unreadable:${e.code}`, [{ location: { file, documentIndex: 0 }, message: `cannot read: ${e.message}` }]);
    }
    const hash = createHash('sha256').update(text).digest('hex');
    if (prev && prev.hash === hash) return undefined;
    const parsed = parseConfigText(file, text, this.options.kinds);
    if (parsed.issues.some(isSyntaxIssue)) return this.reject(sourceId, file, prev, hash, parsed.issues);

    const { resources, kept } = withLastGood(parsed, prev?.good ?? []);
    this.files.set(sourceId, { file, hash, good: resources, lastLoaded: new Date(), lastError: joinIssues(parsed.issues) });
    for (const issue of parsed.issues) {
      const key = identityOf(issue);
      this.report(issue, key && kept.has(key) ? `keeping the last good version of ${key}` : undefined);
    }
    this.options.logger.debug(`loaded ${file}`, { resources: resources.length, rejected: parsed.issues.length });
    return { sourceId, resources };
  }

  /** The whole file is rejected: its last good resources stay as they are. */
  private reject(sourceId: string, file: string, prev: FileState | undefined, hash: string, issues: ConfigIssue[]): undefined {
    if (prev?.hash === hash) return undefined; // the same failure again: reported already
    const good = prev?.good ?? [];
    this.files.set(sourceId, { file, hash, good, lastLoaded: new Date(), lastError: joinIssues(issues) });
    const note = good.length ? `keeping the file's last good version (${good.length} resources)` : 'nothing from this file is served';
    for (const issue of issues) this.report(issue, note);
    return undefined;
  }

  private report(issue: ConfigIssue, note: string | undefined): void {
    this.options.logger.error(`rejected config: ${formatIssue(issue)}${note ? `; ${note}` : ''}`);
    this.options.onRejected?.(issue);
  }

  /** From a watch event or poll tick: failures are logged, the last config stays. */
  private resyncFromEvent(): void {
    try {
      this.resync();
      this.treeWatcher?.refresh();
      if (this.dirMissing) this.options.logger.info(`config directory ${this.options.dir} is back`);
      this.dirMissing = false;
    } catch (err) {
      if (!fs.existsSync(this.options.dir)) {
        if (!this.dirMissing) this.options.logger.error(`config directory ${this.options.dir} disappeared; keeping the last loaded config until it is back`);
        this.dirMissing = true;
        // The watch followed the old directory: only polling can see a new one appear.
        this.fallBackToPolling();
      } else {
        // Usually a subdirectory removed while being listed; its own event follows.
        this.options.logger.warn(`cannot list config directory ${this.options.dir}: ${(err as Error).message}`);
      }
    }
  }

  private startWatching(): () => void {
    const watcher = new DirectoryTreeWatcher(
      this.options.dir,
      () => this.debouncer.add(true),
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

  private fallBackToPolling(): void {
    if (!this.started || this.polling) return;
    this.stopWatching?.();
    this.stopWatching = this.startPolling();
  }

  private startPolling(): () => void {
    const timer = setInterval(() => this.debouncer.add(true), this.pollMs());
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

/**
 * A YAML syntax error (parseConfigText marks them "invalid YAML"): document boundaries may be
 * wrong too, so nothing of the file can be trusted, not even which resources it still declares.
 */
function isSyntaxIssue(issue: ConfigIssue): boolean {
  return issue.kind === undefined && issue.message.startsWith('invalid YAML');
}

function joinIssues(issues: readonly ConfigIssue[]): string | undefined {
  return issues.length ? issues.map(formatIssue).join('\n') : undefined;
}

function summary(changes: readonly ConfigChange[]): string {
  const count = (t: ConfigChange['type']) => changes.filter((c) => c.type === t).length;
  return (['added', 'updated', 'deleted'] as const)
    .filter((t) => count(t))
    .map((t) => `${count(t)} ${t}`)
    .join(', ');
}
