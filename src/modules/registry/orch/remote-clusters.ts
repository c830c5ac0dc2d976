import type { KubeConfig, V1Secret } from '@kubernetes/client-node';
import { inject, injectable } from 'inversify';
import { Logging, LoggingToken, ScopedLogger } from '../../logging';
import { Informer, objectKey, OrchClient, OrchMetrics, SECRETS } from '../../orch';
import { MulticlusterMetrics } from './multicluster-metrics';
import { MulticlusterRegistry } from './multicluster-registry';
import { OrchRegistryMetrics } from './metrics';
import { OrchRegistryOptions, OrchRegistryOptionsToken, OrchServiceRegistry } from './registry';
import { describeSecret, MULTICLUSTER_SECRET_SELECTOR, RemoteClusterEntry, remoteClustersOf, remoteKubeConfig } from './remote-secret';

/** Bound by the daemon from its flags and settings. */
export const RemoteClustersOptionsToken = Symbol.for('mesh.RemoteClustersOptions');
export interface RemoteClustersOptions {
  /** PILOT_REMOTE_CLUSTER_TIMEOUT: how long start-up waits for remote clusters; 0 = until they sync. */
  syncTimeoutMs: number;
  /** PILOT_INSECURE_MULTICLUSTER_ORCHCONFIG_OPTIONS, parsed. */
  allowedInsecureOptions: ReadonlySet<string>;
  /** `--orchApiQPS` and `--orchApiBurst`, per remote cluster's client as for the local one. */
  qps: number;
  burst: number;
  /** Secrets are re-examined this often (0 = never). */
  resyncMs: number;
}

/** One cluster as the daemon's `/debug/clusterz` lists it (the incumbent's field names). */
export interface ClusterDebugInfo {
  id: string;
  /** `namespace/name` of the remote secret; '' for the daemon's own cluster. */
  secretName: string;
  /** `synced`; `syncing` until its first lists are in; `timeout` when start-up stopped waiting for it first. */
  syncStatus: 'synced' | 'syncing' | 'timeout';
}

/** How often start-up says which remote clusters it still waits for when it waits without limit. */
const WAIT_LOG_INTERVAL_MS = 5000;

/** One remote cluster: its client and registry, and whether its first lists are in. */
class RemoteCluster {
  synced = false;
  /** Start-up gave up waiting for it (PILOT_REMOTE_CLUSTER_TIMEOUT); it may still sync later. */
  syncTimedOut = false;
  private stopped = false;
  private readonly syncWaiters = new Set<() => void>();

  constructor(
    readonly clusterId: string,
    /** `namespace/name` of the Secret that configures it. */
    readonly secretKey: string,
    readonly kubeconfig: string,
    readonly client: OrchClient,
    readonly registry: OrchServiceRegistry,
    private readonly onSynced: (cluster: RemoteCluster) => void,
  ) {}

  start(): void {
    this.registry.start();
    void this.trackSync();
  }

  stop(): void {
    this.stopped = true;
    this.registry.stop();
    this.client.stop();
    for (const waiter of [...this.syncWaiters]) waiter();
  }

  /** True once synced; false when `timeoutMs` passes first or the cluster is stopped. */
  whenSynced(timeoutMs: number): Promise<boolean> {
    if (this.synced || this.stopped) return Promise.resolve(this.synced);
    return new Promise((resolve) => {
      const done = () => {
        clearTimeout(timer);
        this.syncWaiters.delete(done);
        resolve(this.synced);
      };
      const timer = setTimeout(done, timeoutMs);
      this.syncWaiters.add(done);
    });
  }

  private async trackSync(): Promise<void> {
    while (!this.stopped && !(await this.registry.waitForSync(WAIT_LOG_INTERVAL_MS)));
    if (this.stopped) return;
    this.synced = true;
    this.onSynced(this);
    for (const waiter of [...this.syncWaiters]) waiter();
  }
}

/**
 * The remote clusters of the mesh (multicluster by remote secrets): Secrets of the system
 * namespace labelled `mesh/multiCluster=true` name clusters by their data keys, each with the
 * orchestrator config that reaches it. Each cluster gets its own client and Orch registry (with
 * its cluster ID), merged into the MulticlusterRegistry. A changed config restarts the cluster;
 * a removed key or Secret removes it and its endpoints.
 */
@injectable()
export class RemoteClusterController {
  private secrets: Informer<V1Secret> | undefined;
  private readonly clusters = new Map<string, RemoteCluster>();
  private readonly log: ScopedLogger;

  constructor(
    @inject(OrchClient) private readonly localClient: OrchClient,
    @inject(OrchRegistryOptionsToken) private readonly registryOptions: OrchRegistryOptions,
    @inject(RemoteClustersOptionsToken) private readonly options: RemoteClustersOptions,
    @inject(MulticlusterRegistry) private readonly view: MulticlusterRegistry,
    @inject(OrchMetrics) private readonly orchMetrics: OrchMetrics,
    @inject(OrchRegistryMetrics) private readonly registryMetrics: OrchRegistryMetrics,
    @inject(MulticlusterMetrics) private readonly metrics: MulticlusterMetrics,
    @inject(LoggingToken) private readonly logging: Logging,
  ) {
    this.log = logging.scope('orch');
  }

  /** Watches the remote secrets of the local cluster (whose registry is already merged). */
  start(): void {
    this.metrics.managedClusters.set({ cluster_type: 'local' }, 1);
    this.metrics.managedClusters.set({ cluster_type: 'remote' }, 0);
    this.secrets = this.localClient.informer<V1Secret>(SECRETS, {
      namespace: this.registryOptions.systemNamespace,
      labelSelector: MULTICLUSTER_SECRET_SELECTOR,
      resyncMs: this.options.resyncMs,
    });
    this.secrets.on({
      add: (secret) => this.apply(secret),
      update: (_old, secret, resync) => {
        if (!resync) this.apply(secret);
      },
      delete: (secret) => this.removeSecret(secret),
    });
    this.secrets.start();
  }

  stop(): void {
    this.secrets?.stop();
    for (const cluster of this.clusters.values()) cluster.stop();
    this.clusters.clear();
  }

  /** True once the remote secrets are listed (their clusters then started, not necessarily synced). */
  waitForSecrets(timeoutMs: number): Promise<boolean> {
    return this.secrets ? this.secrets.waitForSync(timeoutMs) : Promise.resolve(true);
  }

  /** What is not listed yet, for "waiting for ..." logs. */
  unsynced(): string[] {
    return this.secrets && !this.secrets.hasSynced() ? [`remote secrets (Secret v1 labelled ${MULTICLUSTER_SECRET_SELECTOR})`] : [];
  }

  /**
   * Waits for the remote clusters' first lists, up to PILOT_REMOTE_CLUSTER_TIMEOUT. A cluster
   * still not synced then is counted (remote_cluster_sync_timeouts_total) and logged; the daemon
   * goes on without it and it joins when it syncs.
   */
  async waitForRemoteClusters(): Promise<void> {
    const clusters = [...this.clusters.values()];
    if (clusters.length === 0) return;
    const started = Date.now();
    const timeoutMs = this.options.syncTimeoutMs;
    if (timeoutMs > 0) {
      await Promise.all(clusters.map((c) => c.whenSynced(timeoutMs)));
    } else {
      for (;;) {
        const results = await Promise.all(clusters.map((c) => c.whenSynced(WAIT_LOG_INTERVAL_MS)));
        if (results.every((ok, i) => ok || !this.clusters.has(clusters[i].clusterId))) break;
        this.log.warn(`not ready: waiting for remote clusters ${this.pending(clusters).join('; ')} (PILOT_REMOTE_CLUSTER_TIMEOUT=0: no limit)`);
      }
    }
    const late = clusters.filter((c) => !c.synced && this.clusters.get(c.clusterId) === c);
    for (const cluster of late) {
      cluster.syncTimedOut = true;
      this.metrics.syncTimeouts.inc();
      this.log.warn(
        `remote cluster ${cluster.clusterId} (Secret ${cluster.secretKey}) has not synced within PILOT_REMOTE_CLUSTER_TIMEOUT (${timeoutMs / 1000}s): ` +
          `becoming ready without it; it joins when it syncs (waiting for ${cluster.registry.unsynced().join(', ') || 'its registry'})`,
      );
    }
    const synced = clusters.length - late.length;
    this.log.info(`remote clusters: ${synced} of ${clusters.length} synced in ${((Date.now() - started) / 1000).toFixed(3)}s`);
  }

  /** The remote cluster IDs now managed. */
  clusterIds(): string[] {
    return [...this.clusters.keys()].sort();
  }

  /** Each remote cluster now managed, by ID, with its secret and sync state. */
  debugInfo(): ClusterDebugInfo[] {
    return [...this.clusters.values()]
      .sort((a, b) => (a.clusterId < b.clusterId ? -1 : a.clusterId > b.clusterId ? 1 : 0))
      .map((c) => ({ id: c.clusterId, secretName: c.secretKey, syncStatus: c.synced ? 'synced' : c.syncTimedOut ? 'timeout' : 'syncing' }));
  }

  private pending(clusters: readonly RemoteCluster[]): string[] {
    return clusters.filter((c) => !c.synced).map((c) => `${c.clusterId} (${c.registry.unsynced().join(', ') || 'its registry'})`);
  }

  /** Brings the clusters of `secret` in line with its data: new keys start, changed ones restart, removed ones go. */
  private apply(secret: V1Secret): void {
    const key = objectKey(secret);
    const entries = remoteClustersOf(secret);
    const ids = new Set(entries.map((e) => e.clusterId));
    for (const cluster of [...this.clusters.values()]) {
      if (cluster.secretKey === key && !ids.has(cluster.clusterId)) this.removeCluster(cluster, `its key was removed from ${describeSecret(secret)}`);
    }
    for (const entry of entries) this.applyEntry(secret, key, entry);
    this.updateGauge();
  }

  private applyEntry(secret: V1Secret, key: string, entry: RemoteClusterEntry): void {
    const where = `${describeSecret(secret)} key "${entry.clusterId}"`;
    if (entry.clusterId === this.registryOptions.clusterId) {
      this.log.error(`${where}: cluster ID ${entry.clusterId} is this daemon's own cluster (--clusterID); not added as a remote cluster`);
      return;
    }
    const existing = this.clusters.get(entry.clusterId);
    if (existing && existing.secretKey !== key) {
      this.log.error(`${where}: cluster ${entry.clusterId} is already configured by Secret ${existing.secretKey}; ignored`);
      return;
    }
    if (existing && existing.kubeconfig === entry.kubeconfig) return;
    let cluster: RemoteCluster;
    try {
      cluster = this.makeCluster(key, entry, remoteKubeConfig(secret, entry, this.options.allowedInsecureOptions));
    } catch (err) {
      this.log.error(`${(err as Error).message}; remote cluster ${entry.clusterId} not ${existing ? 'restarted (removed)' : 'added'}`);
      if (existing) this.removeCluster(existing, 'its new config is refused');
      return;
    }
    if (existing) this.removeCluster(existing, `${where} changed; restarting it with the new config`);
    this.clusters.set(entry.clusterId, cluster);
    cluster.start();
    this.view.add(entry.clusterId, cluster.registry);
    this.log.info(`remote cluster ${entry.clusterId} added from ${describeSecret(secret)}: orchestrator API ${cluster.client.describe()}`);
  }

  private makeCluster(secretKey: string, entry: RemoteClusterEntry, kubeConfig: KubeConfig): RemoteCluster {
    const client = new OrchClient({ orchconfig: '', kubeConfig, qps: this.options.qps, burst: this.options.burst }, this.logging, this.orchMetrics);
    const registry = new OrchServiceRegistry({ ...this.registryOptions, clusterId: entry.clusterId }, client, this.orchMetrics, this.registryMetrics, this.logging);
    return new RemoteCluster(entry.clusterId, secretKey, entry.kubeconfig, client, registry, (c) =>
      this.log.info(`remote cluster ${c.clusterId} synced: ${c.registry.snapshot().services.size} services`),
    );
  }

  private removeSecret(secret: V1Secret): void {
    const key = objectKey(secret);
    for (const cluster of [...this.clusters.values()]) if (cluster.secretKey === key) this.removeCluster(cluster, `${describeSecret(secret)} was deleted`);
    this.updateGauge();
  }

  private removeCluster(cluster: RemoteCluster, why: string): void {
    this.clusters.delete(cluster.clusterId);
    this.view.remove(cluster.clusterId);
    cluster.stop();
    this.log.info(`remote cluster ${cluster.clusterId} removed: ${why}`);
  }

  private updateGauge(): void {
    this.metrics.managedClusters.set({ cluster_type: 'remote' }, this.clusters.size);
  }
}
