/** Workload settings the mesh cannot support, flagged before install as `analyze` flags them. */
import type { V1Pod } from '@kubernetes/client-node';
import { IGNORED_NAMESPACES } from '../../inject/policy';
import { OrchClient, PODS } from '../../orch';
import { containersAsProxyUid, PROXY_UID } from '../describe/pod-facts';
import { INVALID_APPLICATION_UID } from '../messages/catalogue';
import { Message, message } from '../messages/message';
import { listObjects } from '../orch-reads';

/** Pods of `namespace` (all but the system namespaces when '') whose application runs as the proxy's UID. */
export async function checkPods(client: OrchClient, namespace: string): Promise<Message[]> {
  const pods = await listObjects<V1Pod>(client, PODS, namespace || undefined);
  const out: Message[] = [];
  for (const pod of pods) {
    const ns = pod.metadata?.namespace ?? 'default';
    if (!namespace && IGNORED_NAMESPACES.includes(ns)) continue;
    const origin = `Pod ${ns}/${pod.metadata?.name}`;
    if (pod.spec?.securityContext?.runAsUser === PROXY_UID || containersAsProxyUid(pod).length) out.push(message(INVALID_APPLICATION_UID, origin));
  }
  return out;
}
