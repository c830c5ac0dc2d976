import type { V1Pod } from '@kubernetes/client-node';
import { OrchAccess } from '../orch-access';
import { UserError } from '../shared/user-error';
import { ZtunnelDump } from './dump';
import { LogRequest } from './log-level';
import { parseZtunnelDump } from './read';

/** ztunnel pods carry this label (the ztunnel DaemonSet's selector). */
export const ZTUNNEL_SELECTOR = 'app=ztunnel';

/** What ztunnel-config needs of the orchestrator: finding pods and reaching a port of one. */
export type ZtunnelPodAccess = Pick<OrchAccess, 'resolvePod' | 'podsBySelector' | 'forwarder'>;

/** How the user picked the ztunnel: at most one of a pod argument and `--node`. */
export interface ZtunnelChoice {
  /** `[<type>/]<name>[.<namespace>]`. */
  target?: string;
  /** The node whose ztunnel to ask. */
  node?: string;
  /** `-n`; a target without `.<namespace>` is looked up there, else in the mesh namespace. */
  namespace?: string;
  meshNamespace: string;
}

/** The reference's rule: a ztunnel is named by at most one of a saved dump, a node and a pod. */
export function checkOneZtunnelSource(sources: { file?: string; node?: string; target?: string }): void {
  if ([sources.file, sources.node, sources.target].filter((v) => v !== undefined && v !== '').length > 1) throw new UserError('at most one of --file, --node, or pod name must be passed');
}

export const podName = (pod: V1Pod): string => `${pod.metadata?.name ?? ''}.${pod.metadata?.namespace ?? ''}`;

/** A ztunnel pod: label `app=ztunnel`, or, without an `app` label, a name starting with `ztunnel`. */
function isZtunnelPod(pod: V1Pod): boolean {
  const app = pod.metadata?.labels?.app;
  return app !== undefined ? app === 'ztunnel' : (pod.metadata?.name ?? '').startsWith('ztunnel');
}

/**
 * The ztunnel pods a command asks: the named pod; the one on `--node`; else the running pods
 * of the ztunnel DaemonSet in the mesh namespace: all of them (`all`), or one, which must be
 * the only one when `single` (the answer differs from node to node).
 */
export async function chooseZtunnelPods(access: ZtunnelPodAccess, choice: ZtunnelChoice, mode: { all?: boolean; single?: boolean } = {}): Promise<V1Pod[]> {
  const where = `namespace ${choice.meshNamespace} (label ${ZTUNNEL_SELECTOR})`;
  if (choice.target) {
    const pod = await access.resolvePod(choice.target, choice.namespace || choice.meshNamespace);
    if (!isZtunnelPod(pod)) throw new UserError(`pod ${podName(pod)} is not a ztunnel (no label ${ZTUNNEL_SELECTOR}); ztunnel-config reads ztunnel pods only`);
    return [pod];
  }
  const pods = await access.podsBySelector(choice.meshNamespace, ZTUNNEL_SELECTOR);
  if (choice.node) {
    const onNode = pods.filter((p) => p.spec?.nodeName === choice.node);
    if (onNode.length === 0) throw new UserError(`no running ztunnel pod on node ${choice.node} in ${where}`);
    return [onNode[0]];
  }
  if (pods.length === 0) throw new UserError(`no running ztunnel pod in ${where}`);
  if (mode.all) return pods;
  if (mode.single && pods.length > 1) throw new UserError(`ztunnel pod name or --node must be set: ${pods.length} ztunnel pods run in ${where}, and this differs between them`);
  return [pods[0]];
}

const firstLine = (body: Buffer): string => body.toString('utf8').trim().split('\n')[0].slice(0, 300);

/** The body of a 200 answer to `method path` on the pod's port; anything else is one line naming the pod. */
async function ask(access: ZtunnelPodAccess, pod: V1Pod, port: number, method: string, path: string): Promise<Buffer> {
  let response: { status: number; body: Buffer };
  try {
    response = await access.forwarder.request(pod, port, { method, path });
  } catch (err) {
    // The forwarder's errors already name the request, the pod and the port.
    if (err instanceof UserError) throw err;
    throw new UserError(`${method} ${path} on port ${port} of ztunnel ${podName(pod)}: ${(err as Error).message}`);
  }
  if (response.status !== 200) throw new UserError(`ztunnel ${podName(pod)} answered ${method} ${path} on port ${port} with status ${response.status}: ${firstLine(response.body)}`);
  return response.body;
}

/** The pod's `/config_dump` on its admin port. */
export async function fetchZtunnelDump(access: ZtunnelPodAccess, pod: V1Pod, adminPort: number): Promise<ZtunnelDump> {
  const body = await ask(access, pod, adminPort, 'GET', '/config_dump');
  return parseZtunnelDump(body, `the config dump of ztunnel ${podName(pod)}`);
}

/**
 * Shows or changes the log levels of each pod through its `/logging`: `<pod>.<namespace>:`
 * then ztunnel's answer, per pod. Pods that fail are named in one error after the others
 * are printed by `print`.
 */
export async function ztunnelLogging(access: ZtunnelPodAccess, pods: readonly V1Pod[], adminPort: number, request: LogRequest, print: (text: string) => void): Promise<void> {
  const path = request.query ? `/logging?${request.query}` : '/logging';
  const failures: string[] = [];
  for (const pod of pods) {
    try {
      const body = await ask(access, pod, adminPort, 'POST', path);
      print(`${podName(pod)}:\n${body.toString('utf8')}\n`);
    } catch (err) {
      failures.push((err as Error).message);
    }
  }
  if (failures.length) throw new UserError(failures.join('; '));
}
