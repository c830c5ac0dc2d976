import type * as k8s from '@kubernetes/client-node';
import { UserError } from '../shared/user-error';

/** A pod by name and namespace, or the pod object itself (as resolvePod returns it). */
export type PodLike = { name: string; namespace: string } | k8s.V1Pod;

/** Object names are DNS subdomains (pods, deployments) and namespaces DNS labels, as the API server checks. */
const SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;
const LABEL = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;

/** A name the API could hold; checked before it goes into a URL path. @throws UserError naming it. */
export function checkName(kind: string, name: string): string {
  if (!name || name.length > 253 || !SUBDOMAIN.test(name)) throw new UserError(`${JSON.stringify(shorten(name))} is not a valid ${kind} name (lower-case letters, digits, '-' and '.')`);
  return name;
}

/** @throws UserError naming the namespace. */
export function checkNamespace(namespace: string): string {
  if (!namespace || namespace.length > 63 || !LABEL.test(namespace)) throw new UserError(`${JSON.stringify(shorten(namespace))} is not a valid namespace name (lower-case letters, digits and '-')`);
  return namespace;
}

/** The name and namespace of `pod`, checked. */
export function podRef(pod: PodLike): { name: string; namespace: string } {
  const name = 'metadata' in pod ? (pod.metadata?.name ?? '') : (pod as { name: string }).name;
  const namespace = 'metadata' in pod ? (pod.metadata?.namespace ?? '') : (pod as { namespace: string }).namespace;
  return { name: checkName('pod', name), namespace: checkNamespace(namespace) };
}

/** @throws UserError unless `port` is 1-65535. */
export function checkPort(port: number, what = 'port'): number {
  if (!Number.isInteger(port) || port < 1 || port > 65535) throw new UserError(`${what} must be 1-65535, got ${port}`);
  return port;
}

function shorten(text: string): string {
  return text.length > 80 ? `${text.slice(0, 77)}...` : text;
}
