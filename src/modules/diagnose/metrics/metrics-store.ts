/**
 * The metrics store add-on (Prometheus-compatible): its pod in the system namespace, found by
 * its `app` label, and its query API on port 9090 (the port `dashboard metrics-store` opens).
 */
import type { V1Pod } from '@kubernetes/client-node';
import { OrchClient, PODS } from '../../orch';
import { UserError } from '../../shared/user-error';
import { listObjects } from '../orch-reads';
import { running } from '../pod-requests';

/** The label of the metrics store's pods (the incumbent's `app=prometheus`, named for its kind). */
export const METRICS_STORE_SELECTOR = 'app=metrics-store';
export const METRICS_STORE_PORT = 9090;

/** The first running metrics store pod, by name. */
export async function findMetricsStore(client: OrchClient, meshNamespace: string): Promise<V1Pod> {
  const pods = running(await listObjects<V1Pod>(client, PODS, meshNamespace, { labelSelector: METRICS_STORE_SELECTOR }));
  pods.sort((a, b) => ((a.metadata?.name ?? '') < (b.metadata?.name ?? '') ? -1 : 1));
  if (!pods.length) throw new UserError(`no metrics store pod (label ${METRICS_STORE_SELECTOR}) is running in namespace ${meshNamespace}; install the metrics store add-on, or name its namespace with --meshNamespace`);
  return pods[0];
}
