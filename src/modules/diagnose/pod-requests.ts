import type { V1Pod } from '@kubernetes/client-node';

/** An HTTP request to a pod's port, through the orchestrator API's port-forward (the reach layer's forwarder). */
export type PodRequest = (pod: V1Pod, port: number, request: { method: string; path: string }) => Promise<{ status: number; body: Buffer }>;

/** The running pods of a list (a pod being deleted is not running). */
export function running(pods: readonly V1Pod[]): V1Pod[] {
  return pods.filter((p) => p.status?.phase === 'Running' && !p.metadata?.deletionTimestamp);
}
