import type { V1ContainerStatus, V1Pod } from '@kubernetes/client-node';
import type { RepairValues } from '../../../../src/modules/cni/repair';

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
