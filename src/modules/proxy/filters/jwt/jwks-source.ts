import { Jwks } from './jwks';
import { JwtStatus, Status } from './status';

/** Where a provider's keys come from. */
export interface JwksSource {
  /** The key set, or the status every token of the provider then fails with. */
  keys(): Promise<Jwks | JwtStatus>;
  close(): void;
}

/** `local_jwks`: parsed once; an unusable set leaves the provider without keys, as Envoy. */
export class LocalJwksSource implements JwksSource {
  private readonly jwks: Jwks | JwtStatus;

  constructor(text: string, onInvalid: (status: JwtStatus) => void) {
    this.jwks = Jwks.parse(text);
    if (!(this.jwks instanceof Jwks)) onInvalid(this.jwks);
  }

  async keys(): Promise<Jwks | JwtStatus> {
    return this.jwks instanceof Jwks ? this.jwks : Status.JwksNoValidKeys;
  }

  close(): void {}
}

export interface RemoteJwksOptions {
  readonly uri: string;
  readonly timeoutMs: number;
  readonly cacheDurationMs: number;
  /** The filter context's clock (ms), which decides cache expiry. */
  readonly now: () => number;
  readonly log: (message: string) => void;
}

/**
 * `remote_jwks`: fetched on demand from `http_uri.uri` within its timeout, kept for
 * `cache_duration`; requests waiting for keys share one fetch. A failed fetch (unreachable,
 * non-200, not a usable key set) fails this request's tokens and is not cached: fail closed.
 */
export class RemoteJwksSource implements JwksSource {
  private cached?: { readonly jwks: Jwks; readonly expiresAt: number };
  private pending?: Promise<Jwks | JwtStatus>;
  private readonly stopped = new AbortController();

  constructor(private readonly options: RemoteJwksOptions) {}

  keys(): Promise<Jwks | JwtStatus> {
    if (this.cached && this.options.now() < this.cached.expiresAt) return Promise.resolve(this.cached.jwks);
    this.pending ??= this.fetchOnce().finally(() => {
      this.pending = undefined;
    });
    return this.pending;
  }

  close(): void {
    this.stopped.abort();
  }

  private async fetchOnce(): Promise<Jwks | JwtStatus> {
    const { uri, timeoutMs } = this.options;
    if (this.stopped.signal.aborted) return Status.JwksFetchFail;
    try {
      const response = await fetch(uri, {
        redirect: 'manual',
        signal: AbortSignal.any([this.stopped.signal, AbortSignal.timeout(timeoutMs)]),
      });
      const body = await response.text();
      if (response.status !== 200) return this.failed(`HTTP ${response.status}`);
      const jwks = Jwks.parse(body);
      if (!(jwks instanceof Jwks)) return this.failed(jwks.message);
      this.cached = { jwks, expiresAt: this.options.now() + this.options.cacheDurationMs };
      return jwks;
    } catch (err) {
      const error = err as Error & { cause?: Error };
      if (error.name === 'TimeoutError') return this.failed(`no answer within ${timeoutMs}ms`);
      return this.failed(error.cause ? `${error.message}: ${error.cause.message}` : error.message);
    }
  }

  private failed(reason: string): JwtStatus {
    this.options.log(`fetching JWKS from ${this.options.uri} failed: ${reason}`);
    return Status.JwksFetchFail;
  }
}
