import type { V1ContainerStatus, V1Pod } from '@kubernetes/client-node';
import type { RepairValues } from '../../../../src/modules/cni/repair';
import type { OrchApiServer } from '../../../helpers/orch-api';

/** Pods as the repair controller meets them: with or without the sidecar, crash-looping or not. */

export const SIDECAR_ANNOTATION = 'sidecar.mesh.io/status';
export const INIT_CONTAINER = 'mesh-validation';

export interface PodShape {
  namespace?: string;
  node?: string;
  labels?: Record<string, string>;
  /** Default: carries the sidecar annotation. */
  sidecar?: boolean;
  initContainers?: V1ContainerStatus[];
}

export function pod(name: string, shape: PodShape = {}): V1Pod {
  return {
    metadata: {
      name,
      namespace: shape.namespace ?? 'default',
      labels: shape.labels,
      annotations: shape.sidecar === false ? { other: 'x' } : { [SIDECAR_ANNOTATION]: '{"initContainers":["mesh-validation"]}' },
    },
    spec: { nodeName: shape.node ?? 'node-1', initContainers: [{ name: INIT_CONTAINER, image: 'proxy' }], containers: [{ name: 'app', image: 'app' }] },
    status: { phase: 'Pending', initContainerStatuses: shape.initContainers ?? [] },
  };
}

/** The validation container crash-looping: its last run ended with `exitCode` (126 = no CNI config). */
export function crashLooping(exitCode = 126, message?: string, name = INIT_CONTAINER): V1ContainerStatus {
  return {
    name,
    image: 'proxy',
    imageID: '',
    ready: false,
    restartCount: 2,
    state: { waiting: { reason: 'CrashLoopBackOff' } },
    lastState: { terminated: { exitCode, reason: 'Error', message } },
  };
}

/** The validation container done: it succeeded (possibly after failing before). */
export function completed(lastExitCode?: number): V1ContainerStatus {
  return {
    name: INIT_CONTAINER,
    image: 'proxy',
    imageID: '',
    ready: true,
    restartCount: lastExitCode === undefined ? 0 : 1,
    state: { terminated: { exitCode: 0, reason: 'Completed' } },
    lastState: lastExitCode === undefined ? {} : { terminated: { exitCode: lastExitCode, reason: 'Error' } },
  };
}

/** Still running its first attempt. */
export function running(): V1ContainerStatus {
  return { name: INIT_CONTAINER, image: 'proxy', imageID: '', ready: false, restartCount: 0, state: { running: {} }, lastState: {} };
}

export function brokenPod(name: string, shape: PodShape = {}): V1Pod {
  return pod(name, { initContainers: [crashLooping()], ...shape });
}

/** The repair values the spec's defaults give, with overrides. */
export function repairValues(overrides: Partial<RepairValues> = {}): RepairValues {
  return {
    enabled: true,
    nodeName: '',
    labelPods: false,
    deletePods: false,
    labelKey: 'cni.mesh.io/uninitialized',
    labelValue: 'true',
    fieldSelectors: '',
    labelSelectors: '',
    initContainerName: 'mesh-validation',
    initContainerExitCode: 126,
    initContainerTerminationMessage: '',
    sidecarAnnotation: 'sidecar.mesh.io/status',
    ...overrides,
  };
}

// ---- the pods in the in-process orchestrator API server (test/helpers/orch-api) ----

/** Stores a pod as the cluster would hold it, creating its namespace first if need be; returns it as stored. */
export async function addPod(server: OrchApiServer, p: V1Pod): Promise<V1Pod> {
  const namespace = p.metadata?.namespace ?? 'default';
  if (!server.get('v1', 'Namespace', undefined, namespace)) await server.create({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: namespace } });
  return server.create({ ...p, apiVersion: 'v1', kind: 'Pod', metadata: { ...p.metadata, namespace } });
}

export function getPod(server: OrchApiServer, namespace: string, name: string): V1Pod | undefined {
  return server.get('v1', 'Pod', namespace, name);
}

/** Changes a stored pod (spec, metadata and status) through a function of a copy of it, as the kubelet or a user would. */
export async function modifyPod(server: OrchApiServer, namespace: string, name: string, change: (p: V1Pod) => void): Promise<V1Pod> {
  const current = getPod(server, namespace, name);
  if (!current) throw new Error(`modifyPod: no pod ${namespace}/${name}`);
  change(current);
  return server.update({ ...current, apiVersion: 'v1', kind: 'Pod' });
}
