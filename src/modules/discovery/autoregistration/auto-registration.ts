import { inject, injectable } from 'inversify';
import { LeaderElectionOptions, LeaderElectionOptionsToken } from '../../leader-election';
import { Logging, LoggingToken, ScopedLogger } from '../../logging';
import { Settings, SettingsToken } from '../../settings';
import { XdsConnection } from '../../xds/connection';
import { XdsConnectionListener } from '../../xds/connection-listener';
import {
  AUTO_REGISTER_GROUP_METADATA,
  AUTO_REGISTRATION_GROUP,
  checkRegistrationIdentity,
  CONNECTED_AT,
  DISCONNECTED_AT,
  entryForProxy,
  RegistrationRefused,
  WORKLOAD_CONTROLLER,
  WorkloadEntryObject,
} from './entry-for-proxy';
import { AutoRegistrationMetrics } from './metrics';
import { statusOf, WorkloadEntryApi, WorkloadEntryApiSource, WorkloadEntryApiSourceToken } from './workload-entry-api';

/**
 * WorkloadGroup auto-registration (PILOT_ENABLE_WORKLOAD_ENTRY_AUTOREGISTRATION): a proxy that
 * connects naming a group in its metadata (`AUTO_REGISTER_GROUP`) gets a WorkloadEntry made from
 * the group's template, kept while any of its streams is open here, marked disconnected when the
 * last closes, and deleted after PILOT_WORKLOAD_ENTRY_GRACE_PERIOD unless it comes back (to this
 * daemon or another, which then takes the entry over). Entries whose daemon died are swept by
 * `sweep()`. Operations on one entry run one after another.
 */
@injectable()
export class WorkloadAutoRegistration implements XdsConnectionListener {
  private readonly enabled: boolean;
  private readonly graceMs: number;
  private readonly validateIdentity: boolean;
  readonly controller: string;
  private readonly log: ScopedLogger;
  /** Open streams per registered entry (`namespace/name`). */
  private readonly open = new Map<string, number>();
  private readonly entryOf = new Map<XdsConnection, { namespace: string; name: string }>();
  private readonly timers = new Map<string, NodeJS.Timeout>();
  private readonly chains = new Map<string, Promise<void>>();
  private warnedNoApi = false;
  private resolvedApi: { api: WorkloadEntryApi | undefined } | undefined;
  private stopped = false;
  private sweeper: NodeJS.Timeout | undefined;

  constructor(
    @inject(SettingsToken) settings: Settings,
    @inject(LoggingToken) logging: Logging,
    @inject(AutoRegistrationMetrics) private readonly metrics: AutoRegistrationMetrics,
    @inject(WorkloadEntryApiSourceToken) private readonly apiSource: WorkloadEntryApiSource,
    // The daemon's one identity among replicas (the Lease holder's), so two daemons never take each other for the owner.
    @inject(LeaderElectionOptionsToken) election: LeaderElectionOptions,
  ) {
    this.enabled = settings.bool('PILOT_ENABLE_WORKLOAD_ENTRY_AUTOREGISTRATION');
    this.graceMs = settings.duration('PILOT_WORKLOAD_ENTRY_GRACE_PERIOD').milliseconds;
    this.validateIdentity = settings.bool('MESH_WORKLOAD_ENTRY_VALIDATE_IDENTITY');
    this.controller = election.identity;
    this.log = logging.scope('wle');
  }

  /** Asked for on first use: the orchestrator client is made only by a daemon that has one. */
  private get api(): WorkloadEntryApi | undefined {
    this.resolvedApi ??= { api: this.apiSource.api() };
    return this.resolvedApi.api;
  }

  connected(conn: XdsConnection): void {
    const group = conn.proxy.metadata[AUTO_REGISTER_GROUP_METADATA];
    if (!group || !this.enabled || this.stopped) return;
    if (!this.api) {
      if (!this.warnedNoApi) this.log.warn(`proxy ${conn.proxy.id} asks to register from WorkloadGroup ${group}, but no orchestrator is configured; auto-registration is off`);
      this.warnedNoApi = true;
      return;
    }
    const namespace = conn.proxy.namespace;
    this.serially(`group:${namespace}/${group}:${conn.proxy.ips[0]}`, () => this.register(conn, group));
  }

  disconnected(conn: XdsConnection): void {
    const entry = this.entryOf.get(conn);
    if (!entry) return;
    this.entryOf.delete(conn);
    const key = `${entry.namespace}/${entry.name}`;
    const left = (this.open.get(key) ?? 1) - 1;
    if (left > 0) {
      this.open.set(key, left);
      return;
    }
    this.open.delete(key);
    if (this.stopped) return;
    this.serially(key, () => this.markDisconnected(entry.namespace, entry.name));
    this.timers.set(
      key,
      setTimeout(() => {
        this.timers.delete(key);
        this.serially(key, () => this.deleteIfGone(entry.namespace, entry.name));
      }, this.graceMs).unref(),
    );
  }

  /**
   * Deletes auto-registered entries disconnected longer than the grace period and not open here:
   * those whose daemon died before its timer ran. Run by one daemon at a time (the leader).
   */
  async sweep(now = Date.now()): Promise<number> {
    if (!this.api || !this.enabled) return 0;
    let deleted = 0;
    for (const entry of await this.api.listEntries()) {
      const annotations = entry.metadata.annotations ?? {};
      const since = Date.parse(annotations[DISCONNECTED_AT] ?? '');
      if (!annotations[AUTO_REGISTRATION_GROUP] || Number.isNaN(since) || now - since < this.graceMs) continue;
      const key = `${entry.metadata.namespace}/${entry.metadata.name}`;
      if (this.open.has(key)) continue;
      await this.serially(key, async () => {
        await this.api!.deleteEntry(entry.metadata.namespace!, entry.metadata.name, entry.metadata.resourceVersion!);
        this.metrics.deletes.inc();
        deleted += 1;
        this.log.info(`removed WorkloadEntry ${key}: disconnected since ${annotations[DISCONNECTED_AT]}`);
      });
    }
    return deleted;
  }

  /** Accepts registrations again after stop() (a daemon started anew in the same process). */
  start(): void {
    this.stopped = false;
  }

  /**
   * Sweeps every grace period until stopSweeping(): run by the leader only (AutoRegistrationSweeper),
   * so entries left by a daemon that died are removed once, by one replica.
   */
  startSweeping(): void {
    if (!this.enabled || !this.api || this.sweeper) return;
    this.sweeper = setInterval(() => {
      this.sweep().catch((err) => {
        this.metrics.errors.inc();
        this.log.warn(`auto-registration sweep failed: ${(err as Error).message}`);
      });
    }, Math.max(this.graceMs, 1000)).unref();
  }

  stopSweeping(): void {
    clearInterval(this.sweeper);
    this.sweeper = undefined;
  }

  /** Stops timers; entries stay (another daemon or the next start takes them over or sweeps them). */
  stop(): void {
    this.stopped = true;
    this.stopSweeping();
    for (const timer of this.timers.values()) clearTimeout(timer);
    this.timers.clear();
  }

  /** Waits for every queued operation (tests, shutdown). */
  async idle(): Promise<void> {
    while (this.chains.size > 0) await Promise.all([...this.chains.values()]);
  }

  private async register(conn: XdsConnection, groupName: string): Promise<void> {
    const api = this.api!;
    const proxy = conn.proxy;
    const group = await api.getGroup(proxy.namespace, groupName);
    if (!group) throw new RegistrationRefused(`proxy ${proxy.id} names WorkloadGroup ${proxy.namespace}/${groupName}, which does not exist`);
    checkRegistrationIdentity(group, proxy, conn.identities, this.validateIdentity);
    const wanted = entryForProxy(group, proxy, this.controller, new Date());
    const { namespace, name } = wanted.metadata;
    const key = `${namespace}/${name}`;
    clearTimeout(this.timers.get(key));
    this.timers.delete(key);
    let written = false;
    await this.serially(key, async () => {
      await this.createOrTakeOver(wanted);
      written = true;
    });
    if (!written || this.stopped) return;
    this.entryOf.set(conn, { namespace: namespace!, name });
    this.open.set(key, (this.open.get(key) ?? 0) + 1);
  }

  private async createOrTakeOver(wanted: WorkloadEntryObject): Promise<void> {
    const api = this.api!;
    const { namespace, name } = wanted.metadata;
    for (let attempt = 0; ; attempt += 1) {
      const existing = await api.getEntry(namespace!, name);
      try {
        if (!existing) {
          await api.createEntry(wanted);
          this.metrics.success.inc();
          this.log.info(`registered WorkloadEntry ${namespace}/${name} (${wanted.spec.address}) from WorkloadGroup ${wanted.metadata.annotations![AUTO_REGISTRATION_GROUP]}`);
        } else {
          const annotations = { ...(existing.metadata.annotations ?? {}), ...wanted.metadata.annotations };
          delete annotations[DISCONNECTED_AT];
          await api.replaceEntry({ ...wanted, metadata: { ...wanted.metadata, annotations, resourceVersion: existing.metadata.resourceVersion } });
          this.metrics.updates.inc();
        }
        return;
      } catch (err) {
        // Another daemon wrote it meanwhile: read again and retry once.
        if (attempt === 0 && (statusOf(err) === 409 || statusOf(err) === 422)) continue;
        throw err;
      }
    }
  }

  private async markDisconnected(namespace: string, name: string): Promise<void> {
    const api = this.api!;
    const existing = await api.getEntry(namespace, name);
    const annotations = existing?.metadata.annotations ?? {};
    // Another daemon took it over: its stream is the live one.
    if (!existing || annotations[WORKLOAD_CONTROLLER] !== this.controller) return;
    const now = new Date().toISOString();
    await api.replaceEntry({ ...existing, metadata: { ...existing.metadata, annotations: { ...annotations, [DISCONNECTED_AT]: now } } });
    this.metrics.unregister.inc();
    this.log.info(`WorkloadEntry ${namespace}/${name} disconnected; removing it in ${this.graceMs} ms unless it reconnects`);
  }

  private async deleteIfGone(namespace: string, name: string): Promise<void> {
    const key = `${namespace}/${name}`;
    if (this.open.has(key)) return;
    const existing = await this.api!.getEntry(namespace, name);
    const annotations = existing?.metadata.annotations ?? {};
    if (!existing || !annotations[DISCONNECTED_AT] || annotations[WORKLOAD_CONTROLLER] !== this.controller || annotations[CONNECTED_AT] === undefined) return;
    await this.api!.deleteEntry(namespace, name, existing.metadata.resourceVersion!);
    this.metrics.deletes.inc();
    this.log.info(`removed WorkloadEntry ${key}: disconnected longer than the grace period`);
  }

  /** Runs `work` after the operations queued under `key`; errors are logged and counted, never thrown. */
  private serially(key: string, work: () => Promise<void>): Promise<void> {
    const previous = this.chains.get(key) ?? Promise.resolve();
    const next = previous
      .then(work)
      .catch((err) => {
        this.metrics.errors.inc();
        this.log.warn(`auto-registration: ${err instanceof RegistrationRefused ? err.message : `${key}: ${(err as Error).message}`}`);
      })
      .finally(() => {
        if (this.chains.get(key) === next) this.chains.delete(key);
      });
    this.chains.set(key, next);
    return next;
  }
}
