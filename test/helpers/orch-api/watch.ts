import type * as http from 'node:http';
import { badRequest, tooOldResourceVersion } from './errors';
import { groupVersion, type ResourceType, resourceKey } from './resources';
import { type Selection, selects } from './selectors';
import { jsonOf, type Obj, type Store, type StoreEvent } from './store';

/*
 * Watch streams: chunked JSON lines of {type, object} as the real server sends them. A watch
 * starts from the current state (synthetic ADDED events) or resumes after a resourceVersion
 * from the store's history (an ERROR event with a 410 Status when that part is forgotten).
 * Each event is serialized once per (event type, apiVersion) however many watchers get it.
 */

export interface WatchRequest {
  readonly type: ResourceType;
  readonly version: string;
  readonly namespace?: string;
  readonly selection: Selection;
  readonly bookmarks: boolean;
  readonly resourceVersion?: string;
  readonly sendInitialEvents?: boolean;
  readonly timeoutSeconds?: number;
  /** Encodes each object for the stream instead of the plain JSON (kubectl's Table watch). */
  readonly encode?: (object: Obj, apiVersion: string) => string;
}

interface Watcher extends WatchRequest {
  readonly res: http.ServerResponse;
  readonly apiVersion: string;
  timer?: NodeJS.Timeout;
}

export class WatchHub {
  private readonly byKey = new Map<string, Set<Watcher>>();
  private bookmarkTimer?: NodeJS.Timeout;

  constructor(
    private readonly store: Store,
    private readonly bookmarkIntervalMs: number,
  ) {
    store.onChange((event) => this.dispatch(event));
  }

  get size(): number {
    let n = 0;
    for (const set of this.byKey.values()) n += set.size;
    return n;
  }

  /** Serves a watch on `res` until the client leaves, the timeout passes or the server ends it. */
  open(request: WatchRequest, res: http.ServerResponse): void {
    const from = request.resourceVersion ?? '';
    if (from !== '' && !/^\d+$/.test(from)) throw badRequest(`invalid resource version "${from}"`);
    const initial = from === '' || from === '0' || request.sendInitialEvents === true;
    const events = initial ? [] : this.store.eventsSince(Number(from));
    res.writeHead(200, { 'Content-Type': 'application/json', 'Cache-Control': 'no-cache, private', 'Transfer-Encoding': 'chunked' });
    res.flushHeaders();
    if (events === undefined) {
      // The real server's answer to a version it no longer has: an ERROR event, then the end.
      const status = tooOldResourceVersion(from, this.store.compactedRevision).status();
      res.end(JSON.stringify({ type: 'ERROR', object: status }) + '\n');
      return;
    }
    const watcher: Watcher = { ...request, res, apiVersion: groupVersion(request.type.group, request.version) };
    if (initial) {
      for (const obj of this.store.items(resourceKey(request.type.group, request.type.plural), request.namespace)) {
        if (selects(request.selection, obj)) res.write(line('ADDED', this.encode(watcher, obj)));
      }
      if (request.sendInitialEvents && request.bookmarks) this.bookmark(watcher, true);
    } else {
      const key = resourceKey(request.type.group, request.type.plural);
      for (const event of events) if (event.key === key) this.deliver(watcher, event, new Map());
    }
    const key = resourceKey(request.type.group, request.type.plural);
    let set = this.byKey.get(key);
    if (!set) this.byKey.set(key, (set = new Set()));
    set.add(watcher);
    res.on('close', () => this.forget(watcher));
    if (request.timeoutSeconds && request.timeoutSeconds > 0) {
      watcher.timer = setTimeout(() => this.end(watcher), request.timeoutSeconds * 1000);
    }
    this.scheduleBookmarks();
  }

  /** Ends every watch stream cleanly (clients see the end and watch again). */
  endAll(): void {
    for (const set of this.byKey.values()) for (const w of [...set]) this.end(w);
  }

  /** Ends every watch of one resource type (its CRD went away). */
  endType(key: string): void {
    for (const w of [...(this.byKey.get(key) ?? [])]) this.end(w);
  }

  stop(): void {
    this.endAll();
    clearInterval(this.bookmarkTimer);
    this.bookmarkTimer = undefined;
  }

  /** Sends a BOOKMARK at the current resourceVersion to every watch that allowed them. */
  sendBookmarks(): void {
    for (const set of this.byKey.values()) for (const w of set) if (w.bookmarks) this.bookmark(w);
  }

  private scheduleBookmarks(): void {
    if (this.bookmarkTimer || !(this.bookmarkIntervalMs > 0)) return;
    this.bookmarkTimer = setInterval(() => this.sendBookmarks(), this.bookmarkIntervalMs);
    this.bookmarkTimer.unref();
  }

  private dispatch(event: StoreEvent): void {
    const set = this.byKey.get(event.key);
    if (!set || set.size === 0) return;
    const cache = new Map<string, string>();
    for (const w of set) this.deliver(w, event, cache);
  }

  /** The event as this watch sees it: an object entering its selection is ADDED, one leaving it DELETED. */
  private deliver(w: Watcher, event: StoreEvent, cache: Map<string, string>): void {
    const ns = event.object.metadata.namespace ?? '';
    if (w.namespace !== undefined && ns !== w.namespace) return;
    const now = event.type !== 'DELETED' && selects(w.selection, event.object);
    const before = event.type === 'DELETED' ? selects(w.selection, event.object) : event.previous !== undefined && selects(w.selection, event.previous);
    let type: string;
    if (now) type = before ? 'MODIFIED' : 'ADDED';
    else if (before) type = 'DELETED';
    else return;
    const cacheKey = `${type}|${w.apiVersion}|${w.encode ? 'enc' : ''}`;
    let text = cache.get(cacheKey);
    if (text === undefined) {
      text = line(type, this.encode(w, event.object));
      if (!w.encode) cache.set(cacheKey, text);
    }
    if (!w.res.writableEnded) w.res.write(text);
  }

  private encode(w: Watcher, obj: Obj): string {
    if (w.encode) return w.encode(obj, w.apiVersion);
    return obj.apiVersion === w.apiVersion ? jsonOf(obj) : JSON.stringify({ ...obj, apiVersion: w.apiVersion });
  }

  private bookmark(w: Watcher, initialEventsEnd = false): void {
    const metadata: Obj = { resourceVersion: String(this.store.resourceVersion) };
    if (initialEventsEnd) metadata.annotations = { 'k8s.io/initial-events-end': 'true' };
    if (!w.res.writableEnded) w.res.write(line('BOOKMARK', JSON.stringify({ kind: w.type.kind, apiVersion: w.apiVersion, metadata })));
  }

  private end(w: Watcher): void {
    this.forget(w);
    if (!w.res.writableEnded) w.res.end();
  }

  private forget(w: Watcher): void {
    clearTimeout(w.timer);
    this.byKey.get(resourceKey(w.type.group, w.type.plural))?.delete(w);
  }
}

function line(type: string, objectJson: string): string {
  return `{"type":"${type}","object":${objectJson}}\n`;
}

