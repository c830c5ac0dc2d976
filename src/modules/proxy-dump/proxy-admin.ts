/**
 * A running proxy's admin port, reached through the orchestrator API's port-forward: the pod a
 * `[<type>/]<name>[.<namespace>]` argument (or a label selector) names, and requests to its
 * admin port that name the pod in every error.
 */
import type * as k8s from '@kubernetes/client-node';
import { OrchAccess } from '../orch-access';
import { UserError } from '../shared/user-error';
import { AdminCall } from './live';

export interface ProxyPod {
  name: string;
  namespace: string;
  /** `pod <name> in namespace <namespace>`, for messages. */
  source: string;
  /** Requests to the pod's admin port. */
  call: AdminCall;
}

function proxyPod(access: OrchAccess, pod: k8s.V1Pod, adminPort: number): ProxyPod {
  const name = pod.metadata?.name ?? '';
  const namespace = pod.metadata?.namespace ?? '';
  return {
    name,
    namespace,
    source: `pod ${name} in namespace ${namespace}`,
    call: async (method, path) => {
      const answer = await access.forwarder.request(pod, adminPort, { method, path });
      return { status: answer.status, body: answer.body };
    },
  };
}

/** The pod `target` names; `flagNamespace` (-n) applies when the target has no `.<namespace>`. */
export async function resolveProxyPod(access: OrchAccess, target: string, flagNamespace: string | undefined, adminPort: number): Promise<ProxyPod> {
  const pod = await access.resolvePod(target, access.namespace(flagNamespace));
  return proxyPod(access, pod, adminPort);
}

/** Every running pod matching `selector` in the namespace (-n, else the context's); none is an error. */
export async function selectProxyPods(access: OrchAccess, selector: string, flagNamespace: string | undefined, adminPort: number): Promise<ProxyPod[]> {
  const namespace = access.namespace(flagNamespace);
  const pods = await access.podsBySelector(namespace, selector);
  if (pods.length === 0) throw new UserError(`no running pods match selector ${JSON.stringify(selector)} in namespace ${namespace}`);
  return pods.map((p) => proxyPod(access, p, adminPort));
}
