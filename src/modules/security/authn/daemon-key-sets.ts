/**
 * Request authentication in the daemon: the key-set resolver, the jwt_authn filter contributor
 * that reads it, and the glue to the push pipeline (which key sets to fetch for a push context,
 * and a push when fetched keys change).
 */
import { inject, injectable } from 'inversify';
import { RequestAuthenticationSpec } from '../../config/kinds/request-authentication';
import { ConfigChange, ConfigSnapshot } from '../../config/store';
import { ConfigResource } from '../../config/resource';
import { PushContext } from '../../model/push-context';
import { Settings } from '../../settings';
import { RequestAuthenticationFilters } from './contributor';
import { AuthnSettingError, JwksFetchMode, parseJwksFetchMode } from './fetch-mode';
import { JwksResolver, JwksResolverLogger, JwksResolverObserver } from './jwks-resolver';
import { daemonFetchedKeySets, keySetId, KeySetLocation, meshLookup, policiesUsingKeySets } from './key-source';

export interface KeySetSettings {
  mode: JwksFetchMode;
  refreshIntervalMs: number;
  insecureSkipVerify: boolean;
}

/** PILOT_JWT_ENABLE_REMOTE_JWKS, PILOT_JWT_PUB_KEY_REFRESH_INTERVAL, JWKS_RESOLVER_INSECURE_SKIP_VERIFY; AuthnSettingError when unusable. */
export function keySetSettingsFrom(settings: Settings): KeySetSettings {
  const mode = parseJwksFetchMode(settings.string('PILOT_JWT_ENABLE_REMOTE_JWKS'));
  const interval = settings.duration('PILOT_JWT_PUB_KEY_REFRESH_INTERVAL');
  if (interval.nanos <= 0n) {
    throw new AuthnSettingError(`invalid value "${settings.resolve('PILOT_JWT_PUB_KEY_REFRESH_INTERVAL').raw}" for setting PILOT_JWT_PUB_KEY_REFRESH_INTERVAL: expected a positive duration`);
  }
  return { mode, refreshIntervalMs: interval.milliseconds, insecureSkipVerify: settings.bool('JWKS_RESOLVER_INSECURE_SKIP_VERIFY') };
}

export const DaemonKeySetsOptionsToken = Symbol.for('mesh.DaemonKeySetsOptions');
export interface DaemonKeySetsOptions extends KeySetSettings {
  observer?: JwksResolverObserver;
  logger?: JwksResolverLogger;
}

/** The push pipeline the key sets follow, given when the daemon starts them (it is built after them). */
export interface KeySetPushes {
  /** The push context in force, whose policies a key change concerns. */
  currentPush(): PushContext | undefined;
  /** Pushes as if these policies had changed (they generate other keys now). */
  requestPush(changes: ConfigChange[]): void;
}

@injectable()
export class DaemonKeySets {
  readonly resolver: JwksResolver;
  /** The jwt_authn contributor (the jwt-authn plugin serves it). */
  readonly filters: RequestAuthenticationFilters;
  private pushes: KeySetPushes | undefined;
  /** Key changes lead to pushes only once the daemon serves config. */
  private serving = false;

  constructor(@inject(DaemonKeySetsOptionsToken) private readonly options: DaemonKeySetsOptions) {
    this.resolver = new JwksResolver({
      refreshIntervalMs: options.refreshIntervalMs,
      insecureSkipVerify: options.insecureSkipVerify,
      observer: options.observer,
      logger: options.logger,
      onChange: (ids) => this.keysChanged(ids),
    });
    this.filters = new RequestAuthenticationFilters({ mode: options.mode, keySets: this.resolver });
  }

  /**
   * Fetches the key sets the first push context needs and waits for them (each bounded by its
   * rule's timeout), so the first proxies get real keys; then refreshes them periodically.
   */
  async start(first: PushContext, pushes: KeySetPushes): Promise<void> {
    this.pushes = pushes;
    await this.resolver.want(this.wanted(first.resources<RequestAuthenticationSpec>('RequestAuthentication'), first));
    this.resolver.start();
    this.serving = true;
  }

  /** A new push context: fetch what it needs that is new, forget what it no longer needs. */
  pushContextBuilt(push: PushContext): void {
    const wanted = this.wanted(push.resources<RequestAuthenticationSpec>('RequestAuthentication'), push);
    this.resolver.retainOnly(wanted.map(keySetId));
    void this.resolver.want(wanted);
  }

  /**
   * Store changes, as they arrive (before the push debounce): key sets of new or changed
   * policies start downloading now, so the push that follows usually has them already.
   */
  configChanged(changes: readonly ConfigChange[], snapshot: ConfigSnapshot): void {
    if (!changes.some((c) => c.kind === 'RequestAuthentication')) return;
    const policies = (snapshot.get('RequestAuthentication') ?? []) as readonly ConfigResource<RequestAuthenticationSpec>[];
    void this.resolver.want(this.wanted(policies, this.pushes?.currentPush()));
  }

  stop(): void {
    this.serving = false;
    this.resolver.stop();
  }

  private wanted(policies: readonly ConfigResource<RequestAuthenticationSpec>[], push: PushContext | undefined): KeySetLocation[] {
    return daemonFetchedKeySets(policies, this.options.mode, meshLookup((host) => push?.service(host)));
  }

  private keysChanged(ids: string[]): void {
    const push = this.pushes?.currentPush();
    if (!this.serving || !push) return;
    const keys = policiesUsingKeySets(push.resources<RequestAuthenticationSpec>('RequestAuthentication'), new Set(ids));
    // None: the policies are not in force yet, and the push that brings them reads the new keys.
    if (keys.length === 0) return;
    this.options.logger?.info(`fetched key sets changed; pushing ${keys.join(', ')}`);
    this.pushes!.requestPush(keys.map((key) => ({ key, kind: 'RequestAuthentication', type: 'updated' })));
  }
}
