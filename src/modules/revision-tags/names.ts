import { REVISION_LABEL, INJECTION_LABEL, INJECT_ANNOTATION as INJECT_LABEL } from '../model/mesh-labels';
export { REVISION_LABEL, INJECTION_LABEL, INJECT_LABEL };
/** Labels and names of the mesh's revision tags (as the incumbent's, renamed per the spec). */
export const TAG_LABEL = 'mesh.io/tag';
export const DEFAULT_TAG = 'default';
/** The non-revisioned injector, deactivated when the `default` tag takes over. */
export const DEFAULT_INJECTOR_NAME = 'mesh-sidecar-injector';
/** The cluster-wide validator the `default` tag installs for its revision. */
export const DEFAULT_VALIDATOR_NAME = 'mesh-default-validator';
/** The selector that never matches, put on a deactivated webhook. */
export const NEVER_MATCH: Readonly<Record<string, string>> = { 'mesh.io/deactivated': 'never-match' };
/** Namespaces never injected even when namespaces are injected by default. */
export const SYSTEM_NAMESPACES = ['kube-system', 'kube-public', 'kube-node-lease', 'local-path-storage'];

export function tagWebhookName(tag: string): string {
  return `mesh-revision-tag-${tag}`;
}

/** A tag is a label value (it goes into `mesh.io/rev=<tag>`) and part of an object name. */
const TAG_SYNTAX = /^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$/;

export function checkTagName(tag: string): string {
  if (!TAG_SYNTAX.test(tag)) {
    throw new Error(`invalid revision tag ${JSON.stringify(tag)}: lower case letters, digits and '-', starting and ending with a letter or digit, at most 63 characters`);
  }
  return tag;
}
