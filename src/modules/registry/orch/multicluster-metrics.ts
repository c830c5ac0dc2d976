/**
 * The multicluster metrics, named as in spec/01: the clusters the daemon reads services from
 * and the remote clusters that were not synced when the start-up wait ran out.
 */
import { inject, injectable } from 'inversify';
import { Counter, Gauge } from '../../shared/prom-client';
import { DaemonMetrics } from '../../monitoring';

@injectable()
export class MulticlusterMetrics {
  /** meshd_managed_clusters{cluster_type=local|remote}, as the incumbent labels it. */
  readonly managedClusters: Gauge<'cluster_type'>;
  /** remote_cluster_sync_timeouts_total. */
  readonly syncTimeouts: Counter;

  constructor(@inject(DaemonMetrics) daemon: DaemonMetrics) {
    const registers = [daemon.registry];
    this.managedClusters = new Gauge({ name: 'meshd_managed_clusters', help: 'Number of clusters managed by the daemon.', labelNames: ['cluster_type'], registers });
    this.syncTimeouts = new Counter({ name: 'remote_cluster_sync_timeouts_total', help: 'Number of times remote clusters took too long to sync, causing slow startup that excludes remote clusters.', registers });
  }
}
