import type { V1ContainerStateTerminated, V1Pod } from '@kubernetes/client-node';

/** What marks a pod as broken by the install race; empty or zero fields do not filter. */
export interface BrokenPodCriteria {
  /** Pods without this annotation are never broken; empty: every pod is considered. */
  readonly sidecarAnnotation: string;
  /** The validation init container; empty: any init container. */
  readonly initContainerName: string;
  /** 0: any exit code. */
  readonly initContainerExitCode: number;
  /** Empty: any message; otherwise the message, both sides trimmed, must be exactly this. */
  readonly initContainerTerminationMessage: string;
}

/**
 * The incumbent's rule: the pod carries the sidecar annotation and an init container of that
 * name whose last termination (the crash-loop's previous run) matches the exit code and
 * message, unless that container's current run has completed successfully, which always
 * means healthy (the container got its network after all).
 */
export function isBrokenPod(pod: V1Pod, criteria: BrokenPodCriteria): boolean {
  if (criteria.sidecarAnnotation !== '' && !hasKey(pod.metadata?.annotations, criteria.sidecarAnnotation)) return false;
  for (const status of pod.status?.initContainerStatuses ?? []) {
    if (criteria.initContainerName !== '' && status.name !== criteria.initContainerName) continue;
    const current = status.state?.terminated;
    if (current && (current.reason === 'Completed' || current.exitCode === 0)) continue;
    const last = status.lastState?.terminated;
    if (last && exitCodeMatches(last, criteria) && messageMatches(last, criteria)) return true;
  }
  return false;
}

function exitCodeMatches(state: V1ContainerStateTerminated, criteria: BrokenPodCriteria): boolean {
  return criteria.initContainerExitCode === 0 || state.exitCode === criteria.initContainerExitCode;
}

function messageMatches(state: V1ContainerStateTerminated, criteria: BrokenPodCriteria): boolean {
  const expected = criteria.initContainerTerminationMessage.trim();
  return expected === '' || expected === (state.message ?? '').trim();
}

function hasKey(map: Record<string, string> | undefined, key: string): boolean {
  return map !== undefined && Object.prototype.hasOwnProperty.call(map, key);
}
