/**
 * `meshctl remote-clusters`: each daemon's `/debug/clusterz` (its own cluster and the remote
 * clusters it reads, with their remote secret and sync status), fetched from the daemon's
 * monitoring port through a port-forward, as the incumbent fetches it, and listed per daemon.
 */
import type { V1Pod } from '@kubernetes/client-node';
import { REVISION_LABEL } from '../../inject/policy';
import { OrchClient, PODS } from '../../orch';
import type { ClusterDebugInfo } from '../../registry';
import { UserError } from '../../shared/user-error';
import { columns } from '../columns';
import { listObjects } from '../orch-reads';
import { PodRequest, running } from '../pod-requests';
import { DAEMON_SELECTOR } from '../precheck/control-plane';

/** The daemon's monitoring port (`--monitoringAddr`), which serves its debug pages too. */
export const DAEMON_DEBUG_PORT = 15014;

export interface DaemonClusters {
  /** `<pod>.<namespace>` of the daemon. */
  daemon: string;
  clusters: ClusterDebugInfo[];
}

/** The running daemon pods of the revision ('' for all), by name. */
export async function daemonPods(client: OrchClient, meshNamespace: string, revision: string): Promise<V1Pod[]> {
  const selector = revision ? `${DAEMON_SELECTOR},${REVISION_LABEL}=${revision}` : DAEMON_SELECTOR;
  const pods = running(await listObjects<V1Pod>(client, PODS, meshNamespace, { labelSelector: selector }));
  if (!pods.length) throw new UserError(`no control plane pod (label ${selector}) is running in namespace ${meshNamespace}`);
  return pods.sort((a, b) => ((a.metadata?.name ?? '') < (b.metadata?.name ?? '') ? -1 : 1));
}

function isClusterList(value: unknown): value is ClusterDebugInfo[] {
  return Array.isArray(value) && value.every((c) => c && typeof c === 'object' && typeof (c as ClusterDebugInfo).id === 'string');
}

/** One daemon's clusters; an answer that is not the clusterz list names the daemon. */
export async function fetchClusters(request: PodRequest, pod: V1Pod): Promise<DaemonClusters> {
  const daemon = `${pod.metadata?.name}.${pod.metadata?.namespace}`;
  const answer = await request(pod, DAEMON_DEBUG_PORT, { method: 'GET', path: '/debug/clusterz' });
  if (answer.status !== 200) throw new UserError(`daemon ${daemon}: /debug/clusterz answered HTTP ${answer.status}: ${answer.body.toString('utf8').trim().slice(0, 200)}`);
  let parsed: unknown;
  try {
    parsed = JSON.parse(answer.body.toString('utf8'));
  } catch {
    throw new UserError(`daemon ${daemon}: /debug/clusterz did not answer JSON`);
  }
  if (!isClusterList(parsed)) throw new UserError(`daemon ${daemon}: /debug/clusterz did not answer a list of clusters`);
  return { daemon, clusters: parsed };
}

/** NAME, SECRET, STATUS, MESHD: one row per cluster of each daemon, by daemon then cluster. */
export function clustersTable(all: readonly DaemonClusters[]): string {
  const rows = [['NAME', 'SECRET', 'STATUS', 'MESHD']];
  for (const d of [...all].sort((a, b) => (a.daemon < b.daemon ? -1 : a.daemon > b.daemon ? 1 : 0))) {
    for (const c of [...d.clusters].sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0))) rows.push([c.id, c.secretName ?? '', c.syncStatus ?? '', d.daemon]);
  }
  return columns(rows, { minWidth: 0, padding: 5 });
}
