/** What describe reads off a pod: its proxy, revision, ports, readiness and telemetry labels. */
import type { V1Container, V1Pod } from '@kubernetes/client-node';
import { PROXY_CONTAINER } from '../../inject/pod';
import { STATUS_ANNOTATION } from '../../inject/inject-pod';
import { REVISION_LABEL } from '../../inject/policy';
import { CANONICAL_NAME_LABELS, CANONICAL_REVISION_LABELS } from '../../../plugins/endpoint-telemetry-labels';

/** The UID the proxy runs as; an application container running as it would have its traffic bypass capture. */
export const PROXY_UID = 1337;

/** The proxy container: a container, or a native sidecar (init container), named mesh-proxy. */
export function proxyContainer(pod: V1Pod): V1Container | undefined {
  const named = (list: V1Container[] | undefined) => list?.find((c) => c.name === PROXY_CONTAINER);
  return named(pod.spec?.containers) ?? named(pod.spec?.initContainers);
}

/** The control plane revision that injected the pod: its revision annotation, else the injection status's. */
export function podRevision(pod: V1Pod): string {
  const annotations = pod.metadata?.annotations ?? {};
  if (annotations[REVISION_LABEL] !== undefined) return annotations[REVISION_LABEL];
  try {
    const status = JSON.parse(annotations[STATUS_ANNOTATION] ?? '') as { revision?: unknown };
    return typeof status?.revision === 'string' ? status.revision : '';
  } catch {
    return '';
  }
}

/** `8080 (app)`, `53/UDP (dns)`: each declared container port, TCP left implicit. */
export function podPorts(pod: V1Pod): string[] {
  const out: string[] = [];
  for (const c of pod.spec?.containers ?? []) {
    for (const p of c.ports ?? []) {
      const protocol = p.protocol && p.protocol !== 'TCP' ? `/${p.protocol}` : '';
      out.push(`${p.containerPort}${protocol} (${c.name})`);
    }
  }
  return out;
}

/** Application containers (not the proxy) that run as the proxy's UID. */
export function containersAsProxyUid(pod: V1Pod): string[] {
  return (pod.spec?.containers ?? []).filter((c) => c.name !== PROXY_CONTAINER && c.securityContext?.runAsUser === PROXY_UID).map((c) => c.name);
}

export function hasCanonicalName(labels: Readonly<Record<string, string>>): boolean {
  return CANONICAL_NAME_LABELS.some((k) => labels[k]);
}

export function hasCanonicalRevision(labels: Readonly<Record<string, string>>): boolean {
  return CANONICAL_REVISION_LABELS.some((k) => labels[k]);
}

export function podLabels(pod: V1Pod): Record<string, string> {
  return { ...(pod.metadata?.labels ?? {}) };
}
