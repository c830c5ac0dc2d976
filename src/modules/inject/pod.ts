import { PROXY_CONTAINER } from '../model/mesh-labels';
export { PROXY_CONTAINER };
/**
 * The pod as JSON, the shape the orchestrator's API gives it; only what the injector reads is
 * typed, the rest passes through untouched.
 */

export type JsonMap = Record<string, unknown>;

export interface ObjectMeta extends JsonMap {
  name?: string;
  generateName?: string;
  namespace?: string;
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
  ownerReferences?: { apiVersion?: string; kind?: string; name?: string; controller?: boolean }[];
}

export interface Container extends JsonMap {
  name: string;
  env?: { name: string; value?: string; valueFrom?: unknown }[];
  readinessProbe?: JsonMap;
  livenessProbe?: JsonMap;
  startupProbe?: JsonMap;
  lifecycle?: { preStop?: JsonMap; postStart?: JsonMap } & JsonMap;
  securityContext?: JsonMap;
  args?: string[];
  resources?: JsonMap;
}

export interface PodSpec extends JsonMap {
  containers?: Container[];
  initContainers?: Container[];
  volumes?: ({ name: string } & JsonMap)[];
  imagePullSecrets?: ({ name: string } & JsonMap)[];
  hostNetwork?: boolean;
}

export interface Pod extends JsonMap {
  apiVersion?: string;
  kind?: string;
  metadata?: ObjectMeta;
  spec?: PodSpec;
}

export const INIT_CONTAINER = 'mesh-init';
export const VALIDATION_CONTAINER = 'mesh-validation';
export const CORE_DUMP_CONTAINER = 'enable-core-dump';

export function findContainer(name: string, list: readonly Container[] | undefined): Container | undefined {
  return list?.find((c) => c.name === name);
}

/** The container of that name among the containers, else the init containers. */
export function findContainerInPod(name: string, pod: Pod): Container | undefined {
  return findContainer(name, pod.spec?.containers) ?? findContainer(name, pod.spec?.initContainers);
}

export type Move = 'first' | 'last' | 'remove';

export function moveContainer(list: Container[] | undefined, name: string, move: Move): Container[] | undefined {
  if (!list) return list;
  const match = list.find((c) => c.name === name);
  if (!match) return list;
  const rest = list.filter((c) => c.name !== name);
  if (move === 'first') return [match, ...rest];
  if (move === 'last') return [...rest, match];
  return rest;
}

export interface TypeMeta {
  kind: string;
  apiVersion: string;
}

export interface DeployMeta {
  name: string;
  namespace: string;
}

const CRON_JOB_NAME = /^(.+)-\d{8,10}$/;

/**
 * The workload a pod belongs to, from its controller reference (the incumbent's
 * GetDeployMetaFromPod): a ReplicaSet named after the pod-template hash is its Deployment, a
 * Job with a timestamp suffix its CronJob; a pod without a controller is itself.
 */
export function deployMetaFromPod(pod: Pod): { deploy: DeployMeta; type: TypeMeta } {
  const meta = pod.metadata ?? {};
  const deploy: DeployMeta = { name: meta.name ?? '', namespace: meta.namespace ?? '' };
  const type: TypeMeta = { kind: 'Pod', apiVersion: 'v1' };
  if (meta.generateName) {
    const ref = meta.ownerReferences?.find((r) => r.controller === true);
    if (ref) {
      type.apiVersion = ref.apiVersion ?? '';
      type.kind = ref.kind ?? '';
      deploy.name = ref.name ?? '';
      const hash = meta.labels?.['pod-template-hash'];
      if (type.kind === 'ReplicaSet' && hash && deploy.name.endsWith(hash)) {
        deploy.name = deploy.name.slice(0, -(hash.length + 1));
        type.kind = 'Deployment';
      } else if (type.kind === 'ReplicationController' && meta.labels?.deploymentconfig) {
        deploy.name = meta.labels.deploymentconfig;
        type.kind = 'DeploymentConfig';
        type.apiVersion = 'v1';
      } else if (type.kind === 'Job') {
        const m = CRON_JOB_NAME.exec(deploy.name);
        if (m) {
          deploy.name = m[1];
          type.kind = 'CronJob';
          type.apiVersion = 'batch/v1';
        }
      }
    }
  }
  if (deploy.name === '') deploy.name = meta.name ?? '';
  return { deploy, type };
}
