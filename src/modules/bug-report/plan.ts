import { containerSelected, ContainerRef } from './filter';
import type { BugReportOptions } from './options';
import { PROXY_CONTAINER } from '../model/mesh-labels';
export { PROXY_CONTAINER };

/** The pod fields bug-report reads (as the API answers them). */
export interface PodJson {
  metadata: { name: string; namespace: string; labels?: Record<string, string>; annotations?: Record<string, string> };
  spec?: { containers?: { name: string; image?: string }[]; initContainers?: { name: string; image?: string }[] };
  status?: { phase?: string; containerStatuses?: { name: string; image?: string; restartCount?: number }[]; initContainerStatuses?: { name: string; image?: string; restartCount?: number }[] };
}

export interface DeploymentJson {
  metadata: { name: string; namespace: string };
  spec?: { selector?: { matchLabels?: Record<string, string>; matchExpressions?: { key: string; operator: string; values?: string[] }[] } };
}

/** One container whose log is gathered. */
export interface LogTarget {
  pod: PodJson;
  container: string;
  /** Its last terminated instance too (it restarted). */
  previous: boolean;
  /** `daemon` or `proxies`: the archive folder. */
  role: 'daemon' | 'proxies';
}

/** What a run gathers from pods. */
export interface PodPlan {
  daemonPods: PodJson[];
  proxyPods: PodJson[];
  logs: LogTarget[];
}

export const DAEMON_LABEL = ['app', 'meshd'] as const;

/**
 * The daemon's pods (label app=meshd in the mesh namespace) and the proxies (pods with a
 * `mesh-proxy` container) whose containers the filters select: all containers of a daemon pod,
 * the proxy container of a proxy's pod. Pods not running are left out.
 */
export function planPods(pods: readonly PodJson[], deployments: readonly DeploymentJson[], options: BugReportOptions): PodPlan {
  const plan: PodPlan = { daemonPods: [], proxyPods: [], logs: [] };
  for (const pod of [...pods].sort((a, b) => key(a).localeCompare(key(b)))) {
    if (pod.status?.phase !== 'Running') continue;
    const isDaemon = pod.metadata.namespace === options.meshNamespace && pod.metadata.labels?.[DAEMON_LABEL[0]] === DAEMON_LABEL[1];
    const containers = [...(pod.spec?.containers ?? []), ...(pod.spec?.initContainers ?? [])].map((c) => c.name);
    const wanted = isDaemon ? (pod.spec?.containers ?? []).map((c) => c.name) : containers.filter((c) => c === PROXY_CONTAINER);
    if (wanted.length === 0) continue;
    const deployment = deploymentOf(pod, deployments);
    const selected = wanted.filter((container) => containerSelected(options.include, options.exclude, refOf(pod, deployment, container)));
    if (selected.length === 0) continue;
    (isDaemon ? plan.daemonPods : plan.proxyPods).push(pod);
    const statuses = [...(pod.status?.containerStatuses ?? []), ...(pod.status?.initContainerStatuses ?? [])];
    for (const container of selected) {
      const restarts = statuses.find((s) => s.name === container)?.restartCount ?? 0;
      plan.logs.push({ pod, container, previous: restarts > 0, role: isDaemon ? 'daemon' : 'proxies' });
    }
  }
  return plan;
}

function key(pod: PodJson): string {
  return `${pod.metadata.namespace}/${pod.metadata.name}`;
}

function refOf(pod: PodJson, deployment: string | undefined, container: string): ContainerRef {
  return { namespace: pod.metadata.namespace, deployment, pod: pod.metadata.name, labels: pod.metadata.labels ?? {}, annotations: pod.metadata.annotations ?? {}, container };
}

/** The deployment of the pod's namespace whose selector takes the pod's labels. */
function deploymentOf(pod: PodJson, deployments: readonly DeploymentJson[]): string | undefined {
  const labels = pod.metadata.labels ?? {};
  return deployments.find((d) => d.metadata.namespace === pod.metadata.namespace && selects(d.spec?.selector, labels))?.metadata.name;
}

function selects(selector: NonNullable<DeploymentJson['spec']>['selector'], labels: Record<string, string>): boolean {
  if (!selector) return false;
  const match = Object.entries(selector.matchLabels ?? {});
  const exprs = selector.matchExpressions ?? [];
  if (match.length === 0 && exprs.length === 0) return false; // an empty selector would take every pod
  if (!match.every(([k, v]) => labels[k] === v)) return false;
  return exprs.every((e) => {
    const has = e.key in labels;
    const inValues = has && (e.values ?? []).includes(labels[e.key]);
    switch (e.operator) {
      case 'In':
        return inValues;
      case 'NotIn':
        return !inValues;
      case 'Exists':
        return has;
      case 'DoesNotExist':
        return !has;
      default:
        return false;
    }
  });
}
