/**
 * The daemon's key-set resolver: fetches the key sets it inlines into jwt_authn providers,
 * keeps them, refreshes them every PILOT_JWT_PUB_KEY_REFRESH_INTERVAL, and says when one's
 * content changed so the daemon pushes then (and only then).
 *
 * Generation is synchronous and must not wait on a key server, so `keySet` never blocks: it
 * answers from what is known, and a key set seen for the first time is answered with the
 * fail-closed set while its first fetch runs (bounded by the rule's timeout, 5s by default);
 * when the keys arrive the change is reported and the daemon pushes again. The daemon avoids
 * that window where it can: it waits for the first fetches before serving xDS, and starts the
 * fetch of a new key set as soon as the config store reports the policy, before the push's
 * debounce has run out.
 *
 * A key set that cannot be fetched is never dropped: until a fetch succeeds the fail-closed set
 * (no token verifies) is served; after a failed refresh the last good keys stay, as the
 * incumbent does, and the next refresh comes within a minute.
 */
import { failClosedJwks } from './fail-closed-jwks';
import { httpGetText } from './http-get';
import { KeySetLocation, keySetId } from './key-source';

/** What generators need from the resolver. */
export interface KeySetProvider {
  /** Bumped whenever the content of a key set changes; part of memo keys of config that inlines keys. */
  readonly version: number;
  /** The key set (JWKS JSON) to inline for `location`: the fetched one, else the fail-closed set. Never blocks. */
  keySet(location: KeySetLocation): string;
}

export interface JwksResolverObserver {
  /** One HTTP fetch ended: `ok` when it gave a usable document (pilot_jwks_resolver_network_fetch_{success,fail}_total). */
  fetched(ok: boolean): void;
}

export interface JwksResolverLogger {
  info(message: string): void;
  warn(message: string): void;
  error(message: string): void;
}

export interface JwksResolverOptions {
  /** PILOT_JWT_PUB_KEY_REFRESH_INTERVAL, in milliseconds (> 0). */
  refreshIntervalMs: number;
  /** JWKS_RESOLVER_INSECURE_SKIP_VERIFY. */
  insecureSkipVerify: boolean;
  /** Called once per refresh (or first fetch) that changed key sets, with their ids (see keySetId). */
  onChange?: (ids: string[]) => void;
  observer?: JwksResolverObserver;
  logger?: JwksResolverLogger;
}

/** The incumbent's retry interval after a refresh with failures. */
const REFRESH_INTERVAL_ON_FAILURE_MS = 60_000;
const OPENID_DISCOVERY_SUFFIX = '/.well-known/openid-configuration';

interface Entry {
  readonly id: string;
  location: KeySetLocation;
  /** Last good key set, normalized JSON; undefined until a fetch succeeded. */
  keys: string | undefined;
  /** The fetch in progress, if any. */
  inFlight: Promise<boolean> | undefined;
}

export class JwksResolver implements KeySetProvider {
  private readonly entries = new Map<string, Entry>();
  private timer: NodeJS.Timeout | undefined;
  private running = false;
  private stopped = false;
  private currentVersion = 0;

  constructor(private readonly options: JwksResolverOptions) {
    if (!(options.refreshIntervalMs > 0)) throw new RangeError(`key-set refresh interval must be positive, got ${options.refreshIntervalMs} ms`);
  }

  get version(): number {
    return this.currentVersion;
  }

  keySet(location: KeySetLocation): string {
    return this.ensure(location).keys ?? failClosedJwks();
  }

  /**
   * Makes sure these key sets are known, starting the first fetch of new ones; resolves when
   * every fetch of theirs in progress has ended (each is bounded by its timeout).
   */
  async want(locations: readonly KeySetLocation[]): Promise<void> {
    await Promise.all(locations.map((l) => this.ensure(l).inFlight));
  }

  /** Forgets (stops refreshing) every key set whose id is not in `ids`. */
  retainOnly(ids: Iterable<string>): void {
    const keep = new Set(ids);
    for (const id of [...this.entries.keys()]) if (!keep.has(id)) this.entries.delete(id);
  }

  /** Ids of the key sets known now. */
  known(): string[] {
    return [...this.entries.keys()];
  }

  /** Starts the periodic refresh. */
  start(): void {
    if (this.stopped || this.running) return;
    this.running = true;
    this.schedule(this.options.refreshIntervalMs);
  }

  stop(): void {
    this.stopped = true;
    this.running = false;
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
  }

  /** Fetches every known key set again (what the timer does); reports changed ones with one onChange call. */
  async refresh(): Promise<{ changed: string[]; failed: number }> {
    const results = await Promise.all(
      [...this.entries.values()].map(async (entry) => {
        // A first fetch still running reports its own result.
        if (entry.inFlight) return { entry, changed: false, ok: true };
        const outcome = await this.fetch(entry);
        return { entry, ...outcome };
      }),
    );
    const changed = results.filter((r) => r.changed).map((r) => r.entry.id);
    this.changed(changed);
    return { changed, failed: results.filter((r) => !r.ok).length };
  }

  private schedule(delayMs: number): void {
    this.timer = setTimeout(() => {
      this.timer = undefined;
      void this.refresh().then(({ failed }) => {
        if (this.running) this.schedule(failed > 0 ? Math.min(this.options.refreshIntervalMs, REFRESH_INTERVAL_ON_FAILURE_MS) : this.options.refreshIntervalMs);
      });
    }, delayMs);
    // The timer alone does not keep the process alive; the daemon's servers do.
    this.timer.unref();
  }

  private ensure(location: KeySetLocation): Entry {
    const id = keySetId(location);
    let entry = this.entries.get(id);
    if (!entry) {
      entry = { id, location, keys: undefined, inFlight: undefined };
      this.entries.set(id, entry);
      const first = entry;
      first.inFlight = this.fetch(first).then(({ changed }) => {
        first.inFlight = undefined;
        this.changed(changed ? [first.id] : []);
        return changed;
      });
    } else if (entry.location.timeoutMs < location.timeoutMs) {
      entry.location = { ...entry.location, timeoutMs: location.timeoutMs };
    }
    return entry;
  }

  private changed(ids: string[]): void {
    if (ids.length === 0 || this.stopped) return;
    this.currentVersion += 1;
    this.options.logger?.info(`key sets changed: ${ids.join(', ')}`);
    this.options.onChange?.(ids);
  }

  /** Fetches one key set; a changed result replaces the entry's keys unless the entry was forgotten meanwhile. */
  private async fetch(entry: Entry): Promise<{ changed: boolean; ok: boolean }> {
    let keys: string;
    try {
      keys = await this.download(entry.location);
    } catch (err) {
      const fallback = entry.keys === undefined ? 'serving the fail-closed key set (tokens of this issuer are rejected)' : 'keeping the previous keys';
      this.options.logger?.error(`cannot fetch the key set of ${describe(entry.location)}: ${(err as Error).message}; ${fallback}`);
      return { changed: false, ok: false };
    }
    if (this.entries.get(entry.id) !== entry || keys === entry.keys) return { changed: false, ok: true };
    entry.keys = keys;
    return { changed: true, ok: true };
  }

  private async download(location: KeySetLocation): Promise<string> {
    let uri = location.jwksUri;
    if (!uri) {
      if (!location.issuer) throw new Error('neither jwksUri nor issuer is set');
      const discovery = `${location.issuer.replace(/\/+$/, '')}${OPENID_DISCOVERY_SUFFIX}`;
      uri = await this.get(discovery, location.timeoutMs, jwksUriOfDiscovery);
    }
    return this.get(uri, location.timeoutMs, normalizedKeySet);
  }

  /** One counted fetch: it succeeds when the body is what `read` expects. */
  private async get<T>(url: string, timeoutMs: number, read: (body: string) => T): Promise<T> {
    let value: T;
    try {
      value = read(await httpGetText(url, { timeoutMs, insecureSkipVerify: this.options.insecureSkipVerify }));
    } catch (err) {
      this.options.observer?.fetched(false);
      throw err;
    }
    this.options.observer?.fetched(true);
    return value;
  }
}

function describe(location: KeySetLocation): string {
  return location.jwksUri ?? `issuer ${location.issuer} (OpenID discovery)`;
}

/**
 * A key set as it will be inlined: compact JSON with a non-empty `keys` list. Anything else
 * would make proxies reject the whole listener, so it counts as a failed fetch.
 */
export function normalizedKeySet(body: string): string {
  let parsed: unknown;
  try {
    parsed = JSON.parse(body);
  } catch (err) {
    throw new Error(`the answer is not JSON: ${(err as Error).message}`);
  }
  const keys = (parsed as { keys?: unknown } | null)?.keys;
  if (typeof parsed !== 'object' || parsed === null || !Array.isArray(keys)) throw new Error('the answer is not a key set (an object with a "keys" list)');
  if (keys.length === 0) throw new Error('the key set has no keys');
  return JSON.stringify(parsed);
}

function jwksUriOfDiscovery(body: string): string {
  let parsed: unknown;
  try {
    parsed = JSON.parse(body);
  } catch (err) {
    throw new Error(`the OpenID discovery document is not JSON: ${(err as Error).message}`);
  }
  const uri = (parsed as { jwks_uri?: unknown } | null)?.jwks_uri;
  if (typeof uri !== 'string' || uri === '') throw new Error('the OpenID discovery document has no jwks_uri');
  return uri;
}
