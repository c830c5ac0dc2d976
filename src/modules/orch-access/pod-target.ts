import type * as k8s from '@kubernetes/client-node';
import { UserError } from '../shared/user-error';

/** A command's pod argument, `[<type>/]<name>[.<namespace>]`, parsed. */
export interface PodTarget {
  kind: 'pod' | 'deployment';
  name: string;
  /** Given after the last dot of the name; else the command's namespace applies. */
  namespace?: string;
}

/** The resource types a pod argument may name, as kubectl spells them. */
const KINDS: Record<string, PodTarget['kind']> = {
  pod: 'pod',
  pods: 'pod',
  po: 'pod',
  deployment: 'deployment',
  deployments: 'deployment',
  deploy: 'deployment',
  'deployment.apps': 'deployment',
  'deployments.apps': 'deployment',
};

/**
 * Parses `name`, `name.ns`, `pod/name`, `deployment/name.ns`, ... The namespace is what follows
 * the last dot of the name (as istioctl reads it), so a dotted pod name needs `-n` and no suffix.
 * @throws UserError naming the argument and what is wrong.
 */
export function parsePodTarget(target: string): PodTarget {
  const shown = JSON.stringify(target.length > 80 ? `${target.slice(0, 77)}...` : target);
  const slash = target.indexOf('/');
  let kind: PodTarget['kind'] = 'pod';
  let rest = target;
  if (slash >= 0) {
    const type = target.slice(0, slash).toLowerCase();
    const known = KINDS[type];
    if (!known) throw new UserError(`${shown}: resource type "${type.slice(0, 40)}" cannot be used here; give a pod (<name>, pod/<name>) or a deployment (deployment/<name>)`);
    kind = known;
    rest = target.slice(slash + 1);
  }
  const dot = rest.lastIndexOf('.');
  const name = dot >= 0 ? rest.slice(0, dot) : rest;
  const namespace = dot >= 0 ? rest.slice(dot + 1) : undefined;
  if (!name) throw new UserError(`${shown}: no ${kind} name given`);
  if (namespace === '') throw new UserError(`${shown}: empty namespace after "."`);
  return { kind, name, ...(namespace !== undefined ? { namespace } : {}) };
}

/** A label selector object as the string form the API's `labelSelector` takes. */
export function selectorString(selector: k8s.V1LabelSelector | undefined): string {
  if (!selector) return '';
  const parts = Object.entries(selector.matchLabels ?? {}).map(([k, v]) => `${k}=${v}`);
  for (const e of selector.matchExpressions ?? []) {
    const values = (e.values ?? []).join(',');
    if (e.operator === 'In') parts.push(`${e.key} in (${values})`);
    else if (e.operator === 'NotIn') parts.push(`${e.key} notin (${values})`);
    else if (e.operator === 'Exists') parts.push(e.key);
    else if (e.operator === 'DoesNotExist') parts.push(`!${e.key}`);
  }
  return parts.join(',');
}

/** Running and not being deleted. */
export function isRunning(pod: k8s.V1Pod): boolean {
  return pod.status?.phase === 'Running' && !pod.metadata?.deletionTimestamp;
}

export function isReady(pod: k8s.V1Pod): boolean {
  return (pod.status?.conditions ?? []).some((c) => c.type === 'Ready' && c.status === 'True');
}
