/**
 * Would the API server call a mesh injection webhook for a pod? Each mutating webhook
 * configuration of the mesh is judged by its webhooks' namespaceSelector and objectSelector
 * against the namespace's and the pod's labels, with the reason the incumbent gives: the label
 * that matched, the label that prevents injection, or the labels that would have matched.
 */
import type { V1LabelSelector, V1MutatingWebhook, V1MutatingWebhookConfiguration } from '@kubernetes/client-node';
import { LabelSelector, selectorMatches } from '../../inject/config';
import { INJECTION_LABEL, REVISION_LABEL } from '../../inject/policy';

/** Webhooks of a mesh injection configuration are named `...mesh.io`. */
export const MESH_WEBHOOK_SUFFIX = 'mesh.io';

/** The selector a deactivated webhook carries in both places (as a revision tag change leaves the default one). */
export const NEVER_MATCH: Readonly<Record<string, string>> = { 'mesh.io/deactivated': 'never-match' };

export interface WebhookAnalysis {
  /** The configuration's name. */
  webhook: string;
  /** Its `mesh.io/rev` label. */
  revision: string;
  injected: boolean;
  reason: string;
}

type Labels = Readonly<Record<string, string>>;

/** A selector as the API server applies it: none selects everything; an invalid one selects nothing. */
function selects(selector: V1LabelSelector | undefined, labels: Labels): boolean {
  if (!selector) return true;
  try {
    return selectorMatches(selector as LabelSelector, labels) !== false;
  } catch {
    return false;
  }
}

/** Whether the selector selects, and the `key=value` of the first In/NotIn expression the labels have. */
function matchedSelectorLabel(selector: V1LabelSelector | undefined, labels: Labels): { matched: boolean; label: string } {
  if (!selector) return { matched: true, label: '' };
  if (!selects(selector, labels)) return { matched: false, label: '' };
  for (const e of selector.matchExpressions ?? []) {
    if ((e.operator === 'In' || e.operator === 'NotIn') && Object.prototype.hasOwnProperty.call(labels, e.key)) return { matched: true, label: `${e.key}=${labels[e.key]}` };
  }
  return { matched: true, label: '' };
}

/** `key=value` for each value of the selector's In expressions: the labels that would select. */
function inLabels(selector: V1LabelSelector | undefined): string[] {
  return (selector?.matchExpressions ?? []).filter((e) => e.operator === 'In').flatMap((e) => (e.values ?? []).map((v) => `${e.key}=${v}`));
}

function isNeverMatch(selector: V1LabelSelector | undefined): boolean {
  if (!selector || (selector.matchExpressions ?? []).length) return false;
  const labels = selector.matchLabels ?? {};
  return Object.keys(labels).length === Object.keys(NEVER_MATCH).length && Object.entries(NEVER_MATCH).every(([k, v]) => labels[k] === v);
}

/** Why the webhooks of one configuration do or do not inject. */
function matchStatus(webhooks: readonly V1MutatingWebhook[], podLabels: Labels, nsLabels: Labels): { injected: boolean; reason: string } {
  for (const wh of webhooks) {
    const ns = matchedSelectorLabel(wh.namespaceSelector, nsLabels);
    const pod = matchedSelectorLabel(wh.objectSelector, podLabels);
    if (ns.matched && pod.matched) {
      if (ns.label && pod.label) return { injected: true, reason: `Namespace label ${ns.label} matches, and pod label ${pod.label} matches` };
      if (ns.label) return { injected: true, reason: `Namespace label ${ns.label} matches` };
      if (pod.label) return { injected: true, reason: `Pod label ${pod.label} matches` };
    } else if (ns.matched) {
      for (const e of wh.objectSelector?.matchExpressions ?? []) {
        const has = Object.prototype.hasOwnProperty.call(podLabels, e.key);
        if (has && (e.operator === 'DoesNotExist' || (e.operator === 'NotIn' && (e.values ?? []).includes(podLabels[e.key])))) {
          return { injected: false, reason: `Pod has ${e.key}=${podLabels[e.key]} label, preventing injection` };
        }
      }
    } else if (pod.matched) {
      const value = nsLabels[INJECTION_LABEL];
      if (value !== undefined && value !== 'enabled') return { injected: false, reason: `Namespace has ${INJECTION_LABEL}=${value} label, preventing injection` };
    }
  }
  if (webhooks.some((wh) => isNeverMatch(wh.namespaceSelector) && isNeverMatch(wh.objectSelector))) {
    return { injected: false, reason: 'The injection webhook is deactivated, and will never match labels.' };
  }
  const nsWanted = webhooks.flatMap((wh) => inLabels(wh.namespaceSelector));
  const podWanted = webhooks.flatMap((wh) => inLabels(wh.objectSelector));
  return { injected: false, reason: `No matching namespace labels (${nsWanted.join(', ')}) or pod labels (${podWanted.join(', ')})` };
}

/** A configuration of the mesh: one of its webhooks is named `...mesh.io`. */
export function isMeshInjectionWebhook(config: V1MutatingWebhookConfiguration): boolean {
  return (config.webhooks ?? []).some((wh) => wh.name.endsWith(MESH_WEBHOOK_SUFFIX));
}

/** Each mesh injection webhook configuration, by name, with its verdict for these labels. */
export function analyzeWebhooks(configs: readonly V1MutatingWebhookConfiguration[], podLabels: Labels, nsLabels: Labels): WebhookAnalysis[] {
  return configs
    .filter(isMeshInjectionWebhook)
    .map((c) => ({ webhook: c.metadata?.name ?? '', revision: c.metadata?.labels?.[REVISION_LABEL] ?? '', ...matchStatus(c.webhooks ?? [], podLabels, nsLabels) }))
    .sort((a, b) => (a.webhook < b.webhook ? -1 : a.webhook > b.webhook ? 1 : 0));
}
