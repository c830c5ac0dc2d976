import { performance } from 'node:perf_hooks';
import { OrchApiError, statusCodeOf } from './api-error';
import { collectionPath, describeResource, objectKey, OrchObject, OrchResource } from './resources';

/** How an informer reaches the API: the client's rate-limited list and watch. */
export interface InformerTransport {
  /** GET of a collection (one page), parsed. */
  list(path: string, query: Record<string, string>): Promise<ListPage>;
  /**
   * Opens a watch; `onEvent` gets each event, `onDone` is called once when it ends (null for
   * a clean close by the server). Resolves to what aborts it.
   */
  watch(path: string, query: Record<string, string>, onEvent: (type: string, object: unknown) => void, onDone: (err: unknown) => void): Promise<AbortController>;
}

export interface ListPage {
  apiVersion?: string;
  kind?: string;
  metadata?: { resourceVersion?: string; continue?: string };
  items?: unknown[];
}

export interface InformerOptions {
  /** Only this namespace (MESH_WATCH_NAMESPACE); all namespaces when unset. */
  namespace?: string;
  labelSelector?: string;
  fieldSelector?: string;
  /** Every so often, cached objects are handed to `update` again (resync); 0 = never. */
  resyncMs?: number;
  /** Delay after the first failure; doubles per failure with jitter, up to maxBackoffMs. Default 1 s. */
  initialBackoffMs?: number;
  /** Default 30 s. */
  maxBackoffMs?: number;
  /** Objects per list page. Default 500. */
  pageSize?: number;
  /** The server ends each watch after a random time in this range (seconds), as client-go asks. Default [300, 600]. */
  watchTimeoutSeconds?: readonly [number, number];
  /**
   * A 404 on the list (a custom resource whose definition is not installed) counts as an empty,
   * synced collection, so start-up does not wait for it; the list is retried with backoff.
   */
  missingIsEmpty?: boolean;
  random?: () => number;
}

export interface InformerHandlers<T> {
  add?(obj: T): void;
  /** `resync` is true for the periodic re-delivery of an unchanged object. */
  update?(old: T, obj: T, resync: boolean): void;
  delete?(obj: T): void;
}

/** What the informer tells about itself (controller_sync_errors_total, logs). */
export interface InformerObserver {
  syncError(resource: OrchResource, err: unknown, retryInMs: number): void;
  recovered(resource: OrchResource): void;
  /** The resource is not served (404 with missingIsEmpty); logged once per outage. */
  missing(resource: OrchResource): void;
}

type IndexFn<T> = (obj: T) => readonly string[];

/**
 * List and watch of one resource, with the cache of its objects (client-go's informer): lists
 * (in pages), then watches from the list's resourceVersion with bookmarks; a 410 Gone relists,
 * and a relist reports only what really changed (objects whose resourceVersion moved, objects
 * gone), so relisting an unchanged world costs no events. Errors back off exponentially with
 * jitter up to a cap; a watch that goes silent for longer than its timeout is abandoned.
 */
export class Informer<T extends OrchObject> {
  private readonly items = new Map<string, T>();
  private readonly handlers = new Set<InformerHandlers<T>>();
  private readonly indexes = new Map<string, { fn: IndexFn<T>; values: Map<string, Set<string>> }>();
  private resourceVersion = '';
  private synced = false;
  private readonly syncWaiters = new Set<() => void>();
  private started = false;
  private stopped = false;
  private abort: AbortController | undefined;
  private wake: (() => void) | undefined;
  private resyncTimer: NodeJS.Timeout | undefined;
  private failures = 0;
  private inError = false;
  private reportedMissing = false;
  private readonly path: string;
  private readonly options: Required<Omit<InformerOptions, 'namespace' | 'labelSelector' | 'fieldSelector'>> & InformerOptions;
  /** The last failure, for "waiting for ..." logs; cleared by a successful list or watch. */
  lastError: unknown;

  constructor(
    readonly resource: OrchResource,
    private readonly transport: InformerTransport,
    options: InformerOptions = {},
    private readonly observer?: InformerObserver,
  ) {
    this.options = {
      resyncMs: 0,
      initialBackoffMs: 1000,
      maxBackoffMs: 30_000,
      pageSize: 500,
      watchTimeoutSeconds: [300, 600],
      missingIsEmpty: false,
      random: Math.random,
      ...options,
    };
    this.path = collectionPath(resource, options.namespace);
  }

  /** Subscribes; returns the unsubscribe function. Add handlers before start() to see the initial list. */
  on(handlers: InformerHandlers<T>): () => void {
    this.handlers.add(handlers);
    return () => void this.handlers.delete(handlers);
  }

  /** An index of the cache by what `fn` says of each object (e.g. pods by node). */
  addIndex(name: string, fn: IndexFn<T>): void {
    const values = new Map<string, Set<string>>();
    for (const [key, obj] of this.items) for (const v of fn(obj)) addTo(values, v, key);
    this.indexes.set(name, { fn, values });
  }

  byIndex(name: string, value: string): T[] {
    const index = this.indexes.get(name);
    if (!index) throw new Error(`no index ${name} on the ${this.resource.kind} informer`);
    return [...(index.values.get(value) ?? [])].map((key) => this.items.get(key)!).filter(Boolean);
  }

  /** The cached object `name` (in `namespace` for namespaced resources). */
  get(name: string, namespace?: string): T | undefined {
    return this.items.get(namespace ? `${namespace}/${name}` : name);
  }

  list(): T[] {
    return [...this.items.values()];
  }

  get size(): number {
    return this.items.size;
  }

  hasSynced(): boolean {
    return this.synced;
  }

  /** True once the first list is in the cache; false when `timeoutMs` passes first (or the informer stops). */
  waitForSync(timeoutMs: number): Promise<boolean> {
    if (this.synced) return Promise.resolve(true);
    if (this.stopped) return Promise.resolve(false);
    return new Promise((resolve) => {
      const done = (value: boolean) => {
        clearTimeout(timer);
        this.syncWaiters.delete(onSync);
        resolve(value);
      };
      const onSync = () => done(this.synced);
      const timer = setTimeout(() => done(false), timeoutMs);
      this.syncWaiters.add(onSync);
    });
  }

  start(): void {
    if (this.started) throw new Error(`the ${this.resource.kind} informer is already started`);
    this.started = true;
    if (this.options.resyncMs > 0) this.resyncTimer = setInterval(() => this.resync(), this.options.resyncMs);
    void this.run();
  }

  stop(): void {
    this.stopped = true;
    clearInterval(this.resyncTimer);
    this.abort?.abort();
    this.abort = undefined;
    this.wake?.();
    for (const waiter of [...this.syncWaiters]) waiter();
  }

  private async run(): Promise<void> {
    while (!this.stopped) {
      try {
        if (!this.resourceVersion) await this.relist();
        if (this.stopped) return;
        const outcome = await this.watchOnce();
        if (outcome === 'gone') {
          // Our resourceVersion is too old (compacted): list again at once.
          this.resourceVersion = '';
          continue;
        }
        if (outcome === 'quick') {
          // Closed at once without a word: not an error, but not a reason to spin either.
          await this.sleep(this.backoffMs(++this.failures));
          continue;
        }
        this.failures = 0;
      } catch (err) {
        if (this.stopped) return;
        if (statusCodeOf(err) === 410) {
          this.resourceVersion = '';
          continue;
        }
        if (statusCodeOf(err) === 404 && this.options.missingIsEmpty && !this.resourceVersion) {
          this.markMissing();
          await this.sleep(this.options.maxBackoffMs);
          continue;
        }
        const delay = this.backoffMs(++this.failures);
        this.lastError = err;
        this.inError = true;
        this.observer?.syncError(this.resource, err, delay);
        await this.sleep(delay);
      }
    }
  }

  /** Lists every page, then brings the cache in line: adds, updates of moved objects, deletes of vanished ones. */
  private async relist(): Promise<void> {
    const listed: T[] = [];
    let continueToken: string | undefined;
    let version = '';
    do {
      const query: Record<string, string> = { limit: String(this.options.pageSize) };
      if (continueToken) query.continue = continueToken;
      if (this.options.labelSelector) query.labelSelector = this.options.labelSelector;
      if (this.options.fieldSelector) query.fieldSelector = this.options.fieldSelector;
      const page = await this.transport.list(this.path, query);
      if (this.stopped) return;
      if (!page || typeof page !== 'object' || !Array.isArray(page.items)) {
        throw new OrchApiError(500, `list of ${describeResource(this.resource)}: the answer is not a list`);
      }
      const itemKind = typeof page.kind === 'string' && page.kind.endsWith('List') ? page.kind.slice(0, -4) : this.resource.kind;
      for (const item of page.items) {
        if (!isObjectLike(item)) continue;
        // List items carry no apiVersion and kind; watch events do. Give them the same shape.
        listed.push({ apiVersion: page.apiVersion, kind: itemKind, ...(item as object) } as T);
      }
      continueToken = page.metadata?.continue || undefined;
      version = page.metadata?.resourceVersion ?? '';
    } while (continueToken);

    const seen = new Set<string>();
    for (const obj of listed) {
      seen.add(objectKey(obj));
      this.upsert(obj);
    }
    for (const [key, obj] of [...this.items]) if (!seen.has(key)) this.remove(obj);
    this.resourceVersion = version;
    this.succeeded();
    this.reportedMissing = false;
    if (!this.synced) this.markSynced();
  }

  /** One watch from the current resourceVersion until the server closes it, it fails, or it says 410. */
  private watchOnce(): Promise<'closed' | 'quick' | 'gone'> {
    const [minTimeout, maxTimeout] = this.options.watchTimeoutSeconds;
    const timeoutSeconds = Math.round(minTimeout + this.options.random() * (maxTimeout - minTimeout));
    const query: Record<string, string> = { resourceVersion: this.resourceVersion, allowWatchBookmarks: 'true', timeoutSeconds: String(timeoutSeconds) };
    if (this.options.labelSelector) query.labelSelector = this.options.labelSelector;
    if (this.options.fieldSelector) query.fieldSelector = this.options.fieldSelector;
    const opened = performance.now();
    let events = 0;
    let gone = false;
    let failure: OrchApiError | undefined;
    let stall: NodeJS.Timeout | undefined;
    return new Promise((resolve, reject) => {
      let controller: AbortController | undefined;
      let ended = false;
      // A watch that stays silent past its timeout (a dead connection) is given up.
      const armStall = () => {
        clearTimeout(stall);
        stall = setTimeout(() => controller?.abort(), (timeoutSeconds + 30) * 1000);
      };
      const onEvent = (type: string, object: unknown) => {
        if (this.stopped || ended) return;
        armStall();
        const obj = object as T & { code?: number; message?: string; reason?: string };
        switch (type) {
          case 'ADDED':
          case 'MODIFIED':
            if (!isObjectLike(obj)) return;
            events++;
            this.upsert(obj);
            break;
          case 'DELETED':
            if (!isObjectLike(obj)) return;
            events++;
            this.remove(obj);
            break;
          case 'BOOKMARK':
            events++;
            break;
          case 'ERROR':
            if (obj?.code === 410) gone = true;
            else failure = new OrchApiError(Number(obj?.code) || 500, `watch of ${describeResource(this.resource)}: ${obj?.message ?? 'error event'}`, obj?.reason);
            controller?.abort();
            return;
          default:
            return;
        }
        const version = obj?.metadata?.resourceVersion;
        if (version) this.resourceVersion = version;
        if (events === 1) this.succeeded();
      };
      const onDone = (err: unknown) => {
        if (ended) return;
        ended = true;
        clearTimeout(stall);
        if (this.abort === controller) this.abort = undefined;
        if (gone) resolve('gone');
        else if (failure) reject(failure);
        else if (err && !this.stopped && !isAbort(err)) reject(err);
        else resolve(events > 0 || performance.now() - opened > 1000 ? 'closed' : 'quick');
      };
      this.transport.watch(this.path, query, onEvent, onDone).then(
        (c) => {
          controller = c;
          if (ended) return;
          this.abort = c;
          if (this.stopped) c.abort();
          else armStall();
        },
        (err) => {
          ended = true;
          reject(err);
        },
      );
    });
  }

  private upsert(obj: T): void {
    const key = objectKey(obj);
    const old = this.items.get(key);
    if (old && old.metadata?.resourceVersion !== undefined && old.metadata.resourceVersion === obj.metadata?.resourceVersion) return;
    this.items.set(key, obj);
    this.reindex(key, old, obj);
    for (const h of [...this.handlers]) {
      if (old) h.update?.(old, obj, false);
      else h.add?.(obj);
    }
  }

  private remove(obj: T): void {
    const key = objectKey(obj);
    const old = this.items.get(key);
    if (!old) return;
    this.items.delete(key);
    this.reindex(key, old, undefined);
    // The last state we knew, unless the event carries a newer one.
    const last = obj.metadata?.resourceVersion ? obj : old;
    for (const h of [...this.handlers]) h.delete?.(last);
  }

  private reindex(key: string, old: T | undefined, next: T | undefined): void {
    for (const { fn, values } of this.indexes.values()) {
      if (old) for (const v of fn(old)) removeFrom(values, v, key);
      if (next) for (const v of fn(next)) addTo(values, v, key);
    }
  }

  private resync(): void {
    if (!this.synced || this.stopped) return;
    for (const obj of [...this.items.values()]) for (const h of [...this.handlers]) h.update?.(obj, obj, true);
  }

  private markSynced(): void {
    this.synced = true;
    for (const waiter of [...this.syncWaiters]) waiter();
  }

  private markMissing(): void {
    if (!this.reportedMissing) this.observer?.missing(this.resource);
    this.reportedMissing = true;
    // Nothing is served: whatever was cached is gone (the definition was removed).
    for (const obj of [...this.items.values()]) this.remove(obj);
    if (!this.synced) this.markSynced();
  }

  private succeeded(): void {
    this.failures = 0;
    this.lastError = undefined;
    if (this.inError) {
      this.inError = false;
      this.observer?.recovered(this.resource);
    }
  }

  /** Exponential from initialBackoffMs, up to twice that with jitter, capped at maxBackoffMs. */
  private backoffMs(failures: number): number {
    const base = this.options.initialBackoffMs * 2 ** Math.min(failures - 1, 30);
    return Math.round(Math.min(this.options.maxBackoffMs, base * (1 + this.options.random())));
  }

  private sleep(ms: number): Promise<void> {
    if (this.stopped) return Promise.resolve();
    return new Promise((resolve) => {
      const timer = setTimeout(() => {
        this.wake = undefined;
        resolve();
      }, ms);
      this.wake = () => {
        clearTimeout(timer);
        this.wake = undefined;
        resolve();
      };
    });
  }
}

function isObjectLike(v: unknown): v is OrchObject {
  return typeof v === 'object' && v !== null && !Array.isArray(v) && typeof (v as OrchObject).metadata === 'object';
}

function isAbort(err: unknown): boolean {
  return typeof err === 'object' && err !== null && ((err as Error).name === 'AbortError' || (err as { type?: string }).type === 'aborted');
}

function addTo(map: Map<string, Set<string>>, value: string, key: string): void {
  let set = map.get(value);
  if (!set) map.set(value, (set = new Set()));
  set.add(key);
}

function removeFrom(map: Map<string, Set<string>>, value: string, key: string): void {
  const set = map.get(value);
  set?.delete(key);
  if (set && set.size === 0) map.delete(value);
}
