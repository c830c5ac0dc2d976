import { InjectionConfig, selectorMatches } from './config';
import { Pod } from './pod';
import { INJECTION_LABEL, REVISION_LABEL, INJECT_ANNOTATION } from '../model/mesh-labels';
export { INJECTION_LABEL, REVISION_LABEL, INJECT_ANNOTATION };

/**
 * Whether a pod gets the sidecar. Two steps, as with the incumbent: the namespace (its
 * `mesh-injection` or `mesh.io/rev` label picks the injector; the webhook configuration's
 * selectors do this there) and then the pod itself (host networking, system namespaces, its
 * `sidecar.mesh.io/inject` label or annotation, the never/always selectors, the policy).
 */

/** Namespaces the injector never touches. */
export const IGNORED_NAMESPACES = ['kube-system', 'kube-public', 'kube-node-lease', 'local-path-storage'];

export interface NamespaceInfo {
  name: string;
  labels: Readonly<Record<string, string>>;
}

export type Decision = { inject: true } | { inject: false; reason: string };

/**
 * Does this injector (of `revision`, '' or 'default' for the default one) serve the pod's
 * namespace? `mesh-injection: enabled` selects the default injector, `mesh-injection:
 * disabled` none; `mesh.io/rev` (on the namespace, else on the pod) selects a revision. A pod
 * labelled `sidecar.mesh.io/inject: "true"` in an unlabelled namespace goes to the default
 * injector; other pods there only when namespaces are enabled by default.
 */
export function namespaceDecision(ns: NamespaceInfo, pod: Pod, revision: string, enableNamespacesByDefault: boolean): Decision {
  const isDefault = revision === '' || revision === 'default';
  const nsInjection = ns.labels[INJECTION_LABEL];
  if (nsInjection === 'disabled') return { inject: false, reason: `namespace ${ns.name} has ${INJECTION_LABEL}=disabled` };
  if (nsInjection === 'enabled') {
    return isDefault ? { inject: true } : { inject: false, reason: `namespace ${ns.name} is served by the default revision, not ${revision}` };
  }
  const nsRev = ns.labels[REVISION_LABEL];
  if (nsRev !== undefined) {
    return nsRev === (isDefault ? 'default' : revision) || (isDefault && nsRev === '')
      ? { inject: true }
      : { inject: false, reason: `namespace ${ns.name} selects revision ${nsRev}` };
  }
  const podRev = pod.metadata?.labels?.[REVISION_LABEL];
  if (podRev !== undefined) {
    return podRev === (isDefault ? 'default' : revision) ? { inject: true } : { inject: false, reason: `pod selects revision ${podRev}` };
  }
  if (isDefault && pod.metadata?.labels?.[INJECT_ANNOTATION] === 'true') return { inject: true };
  if (isDefault && enableNamespacesByDefault && !IGNORED_NAMESPACES.includes(ns.name)) return { inject: true };
  return { inject: false, reason: `namespace ${ns.name} is not labelled for injection (${INJECTION_LABEL} or ${REVISION_LABEL})` };
}

/** The pod-level decision (the incumbent's injectRequired). */
export function podDecision(config: Pick<InjectionConfig, 'policy' | 'neverInjectSelector' | 'alwaysInjectSelector'>, pod: Pod, namespace: string): Decision {
  const meta = pod.metadata ?? {};
  if (pod.spec?.hostNetwork === true) return { inject: false, reason: 'the pod uses host networking' };
  if (IGNORED_NAMESPACES.includes(namespace)) return { inject: false, reason: `namespace ${namespace} is a system namespace` };
  const labels = meta.labels ?? {};
  let selector = meta.annotations?.[INJECT_ANNOTATION] ?? '';
  // The label is the newer interface and wins over the annotation.
  if (Object.prototype.hasOwnProperty.call(labels, INJECT_ANNOTATION)) selector = labels[INJECT_ANNOTATION];
  let useDefault = false;
  let inject = false;
  let why = '';
  switch (selector) {
    case 'true':
      inject = true;
      why = `${INJECT_ANNOTATION}=true`;
      break;
    case 'false':
      why = `${INJECT_ANNOTATION}=false`;
      break;
    default:
      // Empty, or a value other than true/false: the policy decides.
      useDefault = true;
  }
  if (useDefault) {
    for (const s of config.neverInjectSelector) {
      if (selectorMatches(s, labels) === true) {
        useDefault = false;
        inject = false;
        why = 'the pod labels match neverInjectSelector';
        break;
      }
    }
  }
  if (useDefault) {
    for (const s of config.alwaysInjectSelector) {
      if (selectorMatches(s, labels) === true) {
        useDefault = false;
        inject = true;
        break;
      }
    }
  }
  switch (config.policy) {
    case 'enabled':
      if (useDefault || inject) return { inject: true };
      return { inject: false, reason: `sidecar injection is disabled (${why})` };
    case 'disabled':
      if (!useDefault && inject) return { inject: true };
      return { inject: false, reason: useDefault ? 'the injection policy is disabled' : `sidecar injection is disabled (${why})` };
    default:
      return { inject: false, reason: `the injection policy ${JSON.stringify(config.policy)} is neither enabled nor disabled` };
  }
}
