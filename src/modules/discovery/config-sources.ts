import { inject, injectable } from 'inversify';
import {
  ConfigIssue,
  configFileLimits,
  FileConfigSource,
  FileStatus,
  KindRegistry,
  KindRegistryToken,
  MemoryConfigStore,
  OrchConfigSource,
} from '../config';
import { Logging, LoggingToken, ScopedLogger } from '../logging';
import { DaemonMetrics } from '../monitoring';
import { OrchClient, OrchConfigError, OrchMetrics } from '../orch';
import { ClusterDebugInfo, OrchServiceRegistry, RemoteClusterController, ServiceRegistries } from '../registry';
import { Settings, SettingsToken } from '../settings';
import { MeshConfig, MeshNetworks } from '../mesh-config';
import { DaemonFlags, DaemonFlagsToken, DaemonStartError } from './daemon-flags';
import { MeshConfigMapSource } from './mesh-configmap';
import { clusterIdOf, ORCH_RESYNC_MS, orchestratorConfigured, systemNamespaceOf } from './orch-options';

/** How often the daemon says what it still waits for while the orchestrator's first lists are not in. */
const WAIT_LOG_INTERVAL_MS = 5000;

/**
 * Where the daemon's config and services come from: the `--configDir` directory (read, then
 * watched) and the orchestrator (`--orchconfig`, or in-cluster): its custom resources as config
 * and, with `--registries Orch`, its Services and endpoints. Both can be on at once; a file's
 * resource overlays the orchestrator's of the same name. start() resolves once everything is
 * loaded (the orchestrator's informers synced), so the first push is complete.
 */
@injectable()
export class DaemonConfigSources {
  private fileSource: FileConfigSource | undefined;
  private orchSource: OrchConfigSource | undefined;
  private meshConfigMap: MeshConfigMapSource | undefined;
  private orchRegistryStarted = false;
  private stopped = false;

  constructor(
    @inject(DaemonFlagsToken) private readonly flags: DaemonFlags,
    @inject(SettingsToken) private readonly settings: Settings,
    @inject(LoggingToken) private readonly logging: Logging,
    @inject(MemoryConfigStore) private readonly store: MemoryConfigStore,
    @inject(KindRegistryToken) private readonly kinds: KindRegistry,
    @inject(DaemonMetrics) private readonly metrics: DaemonMetrics,
    @inject(ServiceRegistries) private readonly registries: ServiceRegistries,
    @inject(OrchClient) private readonly orchClient: OrchClient,
    @inject(OrchMetrics) private readonly orchMetrics: OrchMetrics,
    @inject(OrchServiceRegistry) private readonly orchRegistry: OrchServiceRegistry,
    @inject(RemoteClusterController) private readonly remoteClusters: RemoteClusterController,
    @inject(MeshConfig) private readonly meshConfig: MeshConfig,
    @inject(MeshNetworks) private readonly meshNetworks: MeshNetworks,
  ) {}

  /** Loads the directory and the orchestrator's objects into the store; resolves once all are in. */
  async start(): Promise<void> {
    this.stopped = false;
    const orchestrator = orchestratorConfigured(this.flags, this.settings);
    if (orchestrator) this.startOrchestrator();
    else if (this.registries.has('Orch')) this.warnNoOrchestrator();
    if (this.flags.configDir) await this.startFiles();
    if (orchestrator) await this.waitForOrchestrator();
  }

  stop(): void {
    this.stopped = true;
    this.fileSource?.stop();
    this.orchSource?.stop();
    this.meshConfigMap?.stop();
    if (this.orchRegistryStarted) {
      this.remoteClusters.stop();
      this.orchRegistry.stop();
    }
    this.orchClient.stop();
  }

  /** Each file under `--configDir` and what became of it (the /debug/config_files page). */
  status(): FileStatus[] {
    return this.fileSource?.status() ?? [];
  }

  /**
   * The clusters whose services the daemon reads (the /debug/clusterz page): its own cluster
   * (no secret) and each remote cluster; none when the Orch registry is off.
   */
  clusters(): ClusterDebugInfo[] {
    if (!this.orchRegistryStarted) return [];
    const local: ClusterDebugInfo = { id: clusterIdOf(this.flags, this.settings), secretName: '', syncStatus: this.orchRegistry.unsynced().length === 0 ? 'synced' : 'syncing' };
    return [local, ...this.remoteClusters.debugInfo()];
  }

  private async startFiles(): Promise<void> {
    const log = this.logging.scope('file');
    this.fileSource = new FileConfigSource({
      dir: this.flags.configDir,
      kinds: this.kinds,
      limits: configFileLimits(this.settings),
      store: this.store,
      logger: log,
      onRejected: (issue: ConfigIssue) => this.metrics.totalRejectedConfigs.inc({ type: issue.kind ?? 'file' }),
    });
    try {
      await this.fileSource.start();
    } catch (err) {
      throw new DaemonStartError(`--configDir: ${(err as Error).message}`);
    }
    const resources = [...this.store.snapshot().values()].reduce((n, list) => n + list.length, 0);
    log.info(`loaded ${resources} resources from ${this.flags.configDir}; watching for changes`);
  }

  /** The client (its config checked now, so a bad one stops start-up), the config source and the registry. */
  private startOrchestrator(): void {
    const log = this.logging.scope('orch');
    let where: string;
    try {
      where = this.orchClient.describe();
    } catch (err) {
      const flag = this.flags.orchconfig ? '--orchconfig' : 'in-cluster config';
      throw new DaemonStartError(err instanceof OrchConfigError ? `${flag}: ${err.message}` : `${flag}: ${(err as Error).message}`);
    }
    const watchNamespace = this.settings.string('MESH_WATCH_NAMESPACE') || undefined;
    log.info(`orchestrator API ${where}; watching mesh config${this.registries.has('Orch') ? ' and the Orch registry' : ''}${watchNamespace ? ` in namespace ${watchNamespace}` : ''}`);
    this.orchSource = new OrchConfigSource({
      client: this.orchClient,
      kinds: this.kinds,
      store: this.store,
      logger: log,
      namespace: watchNamespace,
      resyncMs: ORCH_RESYNC_MS,
      onEvent: (kind, event) => this.orchMetrics.cfgEvents.inc({ type: kind, event }),
      onRejected: (issue) => this.metrics.totalRejectedConfigs.inc({ type: issue.kind }),
      onSyncError: () => this.orchMetrics.syncErrors.inc(),
      queueObserver: this.orchMetrics.queueObserver('orch-config'),
    });
    this.orchSource.start();
    // The mesh ConfigMap's layers are in before the first push, like the config.
    this.meshConfigMap = new MeshConfigMapSource({
      client: this.orchClient,
      namespace: systemNamespaceOf(this.flags, this.settings),
      meshConfig: this.meshConfig,
      meshNetworks: this.meshNetworks,
      log,
      resyncMs: ORCH_RESYNC_MS,
    });
    this.meshConfigMap.start();
    if (this.registries.has('Orch')) {
      this.orchRegistry.start();
      this.remoteClusters.start();
      this.orchRegistryStarted = true;
    }
  }

  /** Waits for the first lists, saying every few seconds which ones are still missing and why. */
  private async waitForOrchestrator(): Promise<void> {
    const log = this.logging.scope('orch');
    const started = Date.now();
    for (;;) {
      const [config, registry, secrets, mesh] = await Promise.all([
        this.orchSource!.waitForSync(WAIT_LOG_INTERVAL_MS),
        this.orchRegistryStarted ? this.orchRegistry.waitForSync(WAIT_LOG_INTERVAL_MS) : Promise.resolve(true),
        this.orchRegistryStarted ? this.remoteClusters.waitForSecrets(WAIT_LOG_INTERVAL_MS) : Promise.resolve(true),
        this.meshConfigMap!.waitForSync(WAIT_LOG_INTERVAL_MS),
      ]);
      if (this.stopped) throw new DaemonStartError('stopped while waiting for the orchestrator');
      if (config && registry && secrets && mesh) break;
      this.logWaiting(log);
    }
    const configs = [...this.store.snapshot().values()].reduce((n, list) => n + list.length, 0);
    const services = this.orchRegistry.snapshot().services.size;
    log.info(`orchestrator synced in ${((Date.now() - started) / 1000).toFixed(3)}s: ${configs} config resources${this.orchRegistryStarted ? `, ${services} services` : ''}`);
    // Remote clusters (remote secrets) next, up to PILOT_REMOTE_CLUSTER_TIMEOUT.
    if (this.orchRegistryStarted) await this.remoteClusters.waitForRemoteClusters();
  }

  private logWaiting(log: ScopedLogger): void {
    const missing = [...this.orchSource!.unsynced(), ...(this.orchRegistryStarted ? [...this.orchRegistry.unsynced(), ...this.remoteClusters.unsynced()] : [])];
    log.warn(`not ready: waiting for the orchestrator API to list ${missing.length ? missing.join(', ') : 'the last objects into the registry'}`);
  }

  private warnNoOrchestrator(): void {
    const log = this.logging.scope('orch');
    const note = this.flags.configDir ? '; serving config from --configDir only' : '';
    log.warn(`no orchestrator is configured (no --orchconfig, not running in a cluster); the Orch registry is empty${note}`);
  }
}
