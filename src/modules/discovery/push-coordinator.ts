import { inject, injectable } from 'inversify';
import { MemoryConfigStore } from '../config/memory-store';
import { ConfigChange, ConfigSnapshot, ConfigStore } from '../config/store';
import { ServiceEntrySpec } from '../config/kinds/service-entry';
import { WorkloadEntrySpec } from '../config/kinds/workload-entry';
import { ConfigResource } from '../config/resource';
import { ChangeSet } from '../model/generator';
import { Logging, LoggingToken, ScopedLogger } from '../logging';
import { PushContext, PushContextOptions } from '../model/push-context';
import { RegistryBuilder, ServiceRegistrySnapshot } from '../registry/build';
import { PlatformRegistry, PlatformRegistryEvent } from '../registry/platform';
import { XdsCache } from '../model/xds-cache';
import { Debouncer } from '../shared/debouncer';
import { MeshConfigValues, NetworkAssignment } from '../mesh-config';
import { cacheInvalidation } from './cache-invalidation';
import { diffRegistries } from './registry-diff';

export const PushPipelineObserverToken = Symbol.for('mesh.PushPipelineObserver');
export interface PushPipelineObserver {
  /** One config event arrived; `type` is config, eds or svc (pilot_inbound_updates). */
  inboundUpdate(type: 'config' | 'eds' | 'svc' | 'svcdelete'): void;
  /** Seconds from the first debounced event to the push being queued, and the number of events merged. */
  debounced(seconds: number, events: number): void;
  pushContextBuilt(seconds: number, services: number, virtualServices: number): void;
  /** A push was triggered; `reason` labels pilot_push_triggers. */
  pushTriggered(reason: string): void;
  /** Two ServiceEntries declare one host; the later one is ignored. */
  duplicateHost(host: string, kept: string, ignored: string): void;
}

/** Bound by the discovery module (flags, settings, mesh config, registries). */
export const PushCoordinatorOptionsToken = Symbol.for('mesh.PushCoordinatorOptions');
export interface PushCoordinatorOptions extends PushContextOptions {
  debounceAfterMs: number;
  debounceMaxMs: number;
  /** PILOT_ENABLE_EDS_DEBOUNCE: endpoint-only changes wait for the debounce too. */
  edsDebounce: boolean;
  /** ServiceEntries from registries other than config (the Mock registry). */
  extraServiceEntries: readonly ConfigResource<ServiceEntrySpec>[];
  /** Registries with their own services and endpoints (the orchestrator's), merged first. */
  platformRegistries: readonly PlatformRegistry[];
  /** PILOT_ENABLE_K8S_SELECT_WORKLOAD_ENTRIES. */
  selectWorkloadEntries: boolean;
  /** The xDS cache kept across pushes; undefined when PILOT_ENABLE_XDS_CACHE is off. */
  cache?: XdsCache;
  /** The mesh config in force now (read at each rebuild); the defaults when absent. */
  readonly mesh?: MeshConfigValues;
  /** `--clusterID`: the registry ServiceEntry and WorkloadEntry endpoints belong to. */
  readonly clusterId?: string;
  /** Networks for endpoints that name none (mesh networks in force now). */
  networks?(): NetworkAssignment;
}

/** Where each new push context goes (the xDS server, the key sets). */
export type PushTarget = (push: PushContext, change: ChangeSet, changeAt: number) => void;

interface PendingChange {
  changes: ConfigChange[];
  /** What the platform registries reported (services or endpoints of hosts). */
  registry: PlatformRegistryEvent[];
  events: number;
  /** Why everything must be pushed (the mesh config changed), when it must. */
  fullReasons: string[];
}

/**
 * Turns config changes into pushes (DESIGN.md §2): debounces them, rebuilds the service
 * registry and an immutable push context, works out what changed, and hands both to the
 * push target (the xDS server), which decides who gets what.
 */
@injectable()
export class PushCoordinator {
  private current: PushContext | undefined;
  private push: PushTarget = () => undefined;
  private readonly logger: ScopedLogger;
  private registry: ServiceRegistrySnapshot = { services: new Map(), endpoints: new Map() };
  /** Keeps unchanged ServiceEntries' services and endpoints between pushes. */
  private readonly registryBuilder = new RegistryBuilder();
  private snapshot: ConfigSnapshot = new Map();
  private version = 0;
  private readonly debouncer: Debouncer<PendingChange>;
  private unsubscribe: Array<() => void> = [];

  constructor(
    @inject(MemoryConfigStore) private readonly store: ConfigStore,
    @inject(PushCoordinatorOptionsToken) private readonly options: PushCoordinatorOptions,
    @inject(PushPipelineObserverToken) private readonly observer: PushPipelineObserver,
    @inject(LoggingToken) logging: Logging,
  ) {
    this.logger = logging.scope('model');
    this.debouncer = new Debouncer<PendingChange>(
      options.debounceAfterMs,
      options.debounceMaxMs,
      (a, b) => ({
        changes: [...a.changes, ...b.changes],
        registry: [...a.registry, ...b.registry],
        events: a.events + b.events,
        fullReasons: [...new Set([...a.fullReasons, ...b.fullReasons])],
      }),
      (pending, firstAt) => this.onDebounced(pending, firstAt),
    );
  }

  /** Builds the first push context from what the store holds now and starts listening; later ones go to `target`. */
  start(target: PushTarget): PushContext {
    this.push = target;
    this.unsubscribe.push(this.store.onChange((changes) => this.onChange(changes)));
    for (const registry of this.options.platformRegistries) this.unsubscribe.push(registry.onChange((events) => this.onRegistryChange(events)));
    const { push } = this.rebuild([], []);
    return push;
  }

  stop(): void {
    for (const unsubscribe of this.unsubscribe.splice(0)) unsubscribe();
    this.debouncer.stop();
  }

  currentPush(): PushContext | undefined {
    return this.current;
  }

  /**
   * A push for changes that did not come through the store but change what the named
   * resources generate (a RequestAuthentication whose fetched key set changed); debounced
   * and planned like store changes.
   */
  requestPush(changes: readonly ConfigChange[]): void {
    if (changes.length > 0) this.onChange(changes);
  }

  /**
   * A full push (every resource to every proxy, the xDS cache cleared) for a change outside
   * the config store that everything may depend on: the mesh config (reason `global`, as
   * the incumbent labels it) or mesh networks (`networks`). Debounced with the other changes;
   * `reason` labels pilot_push_triggers.
   */
  requestFullPush(reason: string): void {
    this.observer.inboundUpdate('config');
    this.debouncer.add({ changes: [], registry: [], events: 1, fullReasons: [reason] }, false);
  }

  private onChange(changes: readonly ConfigChange[]): void {
    let endpointsOnly = true;
    for (const c of changes) {
      const type = c.kind === 'WorkloadEntry' ? 'eds' : c.kind === 'ServiceEntry' ? (c.type === 'deleted' ? 'svcdelete' : 'svc') : 'config';
      if (type !== 'eds') endpointsOnly = false;
      this.observer.inboundUpdate(type);
    }
    // Quiet since the latest change was seen: one the source saw earlier waited for quiet already.
    let seenAt = changes.length > 0 ? -Infinity : undefined;
    for (const c of changes) seenAt = c.seenAt === undefined || seenAt === undefined ? undefined : Math.max(seenAt, c.seenAt);
    this.debouncer.add({ changes: [...changes], registry: [], events: changes.length, fullReasons: [] }, endpointsOnly && !this.options.edsDebounce, seenAt);
  }

  /** A platform registry's hosts changed: endpoints only (eds), or their service (svc, svcdelete). */
  private onRegistryChange(events: readonly PlatformRegistryEvent[]): void {
    let endpointsOnly = true;
    for (const e of events) {
      const type = e.what === 'endpoints' ? 'eds' : e.type === 'deleted' ? 'svcdelete' : 'svc';
      if (type !== 'eds') endpointsOnly = false;
      this.observer.inboundUpdate(type);
    }
    this.debouncer.add({ changes: [], registry: [...events], events: events.length, fullReasons: [] }, endpointsOnly && !this.options.edsDebounce);
  }

  private onDebounced(pending: PendingChange, firstAt: number): void {
    this.observer.debounced((Date.now() - firstAt) / 1000, pending.events);
    try {
      const { push, change } = this.rebuild(pending.changes, pending.registry, pending.fullReasons);
      this.push(push, change, firstAt);
    } catch (err) {
      // The previous push context stays in force; proxies keep their config.
      this.logger.error(`push context build failed; keeping the previous one: ${(err as Error).stack ?? err}`);
    }
  }

  /** `fullReasons` non-empty: a full push whatever the changes (the mesh config changed). */
  private rebuild(
    changes: readonly ConfigChange[],
    registryEvents: readonly PlatformRegistryEvent[],
    fullReasons: readonly string[] = [],
  ): { push: PushContext; change: ChangeSet } {
    const started = process.hrtime.bigint();
    const full = (changes.length === 0 && registryEvents.length === 0) || fullReasons.length > 0;
    const snapshot = this.store.snapshot();
    // One version of the mesh config and networks for the whole push.
    const mesh = this.options.mesh;
    const networks = this.options.networks?.();
    const contextOptions = { domain: this.options.domain, rootNamespace: mesh?.rootNamespace ?? this.options.rootNamespace, mesh };
    const serviceEntries = [...this.options.extraServiceEntries, ...((snapshot.get('ServiceEntry') ?? []) as ConfigResource<ServiceEntrySpec>[])];
    const workloadEntries = (snapshot.get('WorkloadEntry') ?? []) as ConfigResource<WorkloadEntrySpec>[];
    const registry = this.registryBuilder.build(serviceEntries, workloadEntries, (host, kept, ignored) => this.observer.duplicateHost(host, kept, ignored), {
      snapshots: this.options.platformRegistries.map((r) => r.snapshot()),
      selectWorkloadEntries: this.options.selectWorkloadEntries,
      clusterId: this.options.clusterId ?? '',
      networks,
    });
    const diff = diffRegistries(this.registry, registry);
    const cache = this.options.cache;
    if (cache) {
      const invalidation = full ? 'all' : cacheInvalidation(changes, diff, this.snapshot, snapshot, contextOptions);
      if (invalidation === 'all') cache.clear();
      else cache.invalidate(invalidation);
    }
    this.registry = registry;
    this.snapshot = snapshot;
    this.version += 1;
    const push = new PushContext(pushVersion(this.version), snapshot, registry, contextOptions, cache);
    const endpointsOnly = !full && diff.services.size === 0 && changes.every((c) => c.kind === 'WorkloadEntry') && registryEvents.every((e) => e.what === 'endpoints');
    if (endpointsOnly && this.current) push.inheritTopology(this.current);
    this.current = push;
    const virtualServices = snapshot.get('VirtualService')?.length ?? 0;
    this.observer.pushContextBuilt(Number(process.hrtime.bigint() - started) / 1e9, registry.services.size, virtualServices);
    const change: ChangeSet = { full, configs: new Set(changes.map((c) => c.key)), ...diff };
    for (const reason of fullReasons.length > 0 ? fullReasons : pushReasons(change, registryEvents)) this.observer.pushTriggered(reason);
    const registryNote = registryEvents.length ? `, ${registryEvents.length} registry changes` : '';
    const why = fullReasons.length > 0 ? ` (full: ${fullReasons.join(', ')})` : '';
    this.logger.info(`push ${push.version}: ${registry.services.size} services, ${virtualServices} virtual services, ${changes.length} config changes${registryNote}${why}`);
    return { push, change };
  }
}

/** A version that sorts by time and stays unique across restarts: `<ISO time>/<n>`. */
function pushVersion(n: number): string {
  return `${new Date().toISOString()}/${n}`;
}

/** Reasons for pilot_push_triggers, as the incumbent names them. */
function pushReasons(change: ChangeSet, registryEvents: readonly PlatformRegistryEvent[]): string[] {
  if (change.full && change.configs.size === 0) return ['global'];
  const reasons = new Set<string>();
  for (const key of change.configs) {
    const kind = key.split('/')[0];
    reasons.add(kind === 'WorkloadEntry' ? 'endpoint' : kind === 'ServiceEntry' ? 'service' : 'config');
  }
  for (const e of registryEvents) reasons.add(e.what === 'endpoints' ? 'endpoint' : 'service');
  return [...reasons];
}
