/**
 * Builds the objects of a revision tag from the revision's own webhook configurations: a
 * MutatingWebhookConfiguration calling the revision's injector for namespaces and pods labelled
 * `mesh.io/rev=<tag>`; for the `default` tag also the cluster-wide `mesh-injection=enabled`
 * selectors, and a ValidatingWebhookConfiguration making the revision the default validator.
 */
import type { V1LabelSelector, V1MutatingWebhook, V1MutatingWebhookConfiguration, V1ValidatingWebhookConfiguration } from '@kubernetes/client-node';
import { UserError } from '../shared/user-error';
import { DEFAULT_TAG, DEFAULT_VALIDATOR_NAME, INJECT_LABEL, INJECTION_LABEL, NEVER_MATCH, REVISION_LABEL, SYSTEM_NAMESPACES, TAG_LABEL, tagWebhookName } from './names';

export interface TagWebhookOptions {
  tag: string;
  revision: string;
  /** Name of the configuration; `mesh-revision-tag-<tag>` when empty. */
  webhookName?: string;
  /** `default` tag only: inject every namespace not labelled otherwise. */
  autoInjectNamespaces?: boolean;
}

type Expr = { key: string; operator: 'In' | 'NotIn' | 'Exists' | 'DoesNotExist'; values?: string[] };
const sel = (...matchExpressions: Expr[]): V1LabelSelector => ({ matchExpressions });
const absent = (key: string): Expr => ({ key, operator: 'DoesNotExist' });
const oneOf = (key: string, ...values: string[]): Expr => ({ key, operator: 'In', values });
const noneOf = (key: string, ...values: string[]): Expr => ({ key, operator: 'NotIn', values });

/** The call the revision's injector takes (service, CA, rules...), from its first webhook. */
function callOf(base: V1MutatingWebhookConfiguration): Omit<V1MutatingWebhook, 'name' | 'namespaceSelector' | 'objectSelector'> {
  const first: unknown = Array.isArray(base.webhooks) ? base.webhooks[0] : undefined;
  if (typeof first !== 'object' || first === null || typeof (first as V1MutatingWebhook).clientConfig !== 'object') {
    throw new UserError(`MutatingWebhookConfiguration ${base.metadata?.name}: no webhook with a clientConfig to copy (webhooks[0])`);
  }
  const { name: _n, namespaceSelector: _ns, objectSelector: _os, ...call } = first as V1MutatingWebhook;
  return call;
}

export function buildTagWebhook(base: V1MutatingWebhookConfiguration, options: TagWebhookOptions): V1MutatingWebhookConfiguration {
  const { tag, revision } = options;
  const call = callOf(base);
  const webhook = (name: string, namespaceSelector: V1LabelSelector, objectSelector: V1LabelSelector): V1MutatingWebhook => ({ name, ...call, namespaceSelector, objectSelector });
  const webhooks: V1MutatingWebhook[] = [
    webhook('rev.namespace.sidecar-injector.mesh.io', sel(oneOf(REVISION_LABEL, tag), absent(INJECTION_LABEL)), sel(noneOf(INJECT_LABEL, 'false'))),
    webhook('rev.object.sidecar-injector.mesh.io', sel(absent(REVISION_LABEL), absent(INJECTION_LABEL)), sel(noneOf(INJECT_LABEL, 'false'), oneOf(REVISION_LABEL, tag))),
  ];
  if (tag === DEFAULT_TAG) {
    if (options.autoInjectNamespaces) {
      webhooks.push(
        webhook('namespace.sidecar-injector.mesh.io', sel(noneOf(INJECTION_LABEL, 'disabled'), absent(REVISION_LABEL), noneOf('kubernetes.io/metadata.name', ...SYSTEM_NAMESPACES)), sel(noneOf(INJECT_LABEL, 'false'))),
        webhook('object.sidecar-injector.mesh.io', sel(absent(INJECTION_LABEL), absent(REVISION_LABEL)), sel(noneOf(INJECT_LABEL, 'false'), absent(REVISION_LABEL))),
      );
    } else {
      webhooks.push(
        webhook('namespace.sidecar-injector.mesh.io', sel(oneOf(INJECTION_LABEL, 'enabled')), sel(noneOf(INJECT_LABEL, 'false'))),
        webhook('object.sidecar-injector.mesh.io', sel(absent(INJECTION_LABEL), absent(REVISION_LABEL)), sel(oneOf(INJECT_LABEL, 'true'), absent(REVISION_LABEL))),
      );
    }
  }
  return {
    apiVersion: 'admissionregistration.k8s.io/v1',
    kind: 'MutatingWebhookConfiguration',
    metadata: {
      name: options.webhookName || tagWebhookName(tag),
      labels: { ...pick(base.metadata?.labels, 'app'), [TAG_LABEL]: tag, [REVISION_LABEL]: revision },
    },
    webhooks,
  };
}

/** The revision's validator, as the cluster-wide default one. */
export function buildDefaultValidator(base: V1ValidatingWebhookConfiguration, revision: string): V1ValidatingWebhookConfiguration {
  if (!Array.isArray(base.webhooks) || !base.webhooks.length || base.webhooks.some((wh) => typeof wh !== 'object' || wh === null)) {
    throw new UserError(`ValidatingWebhookConfiguration ${base.metadata?.name}: no webhooks to copy`);
  }
  return {
    apiVersion: 'admissionregistration.k8s.io/v1',
    kind: 'ValidatingWebhookConfiguration',
    metadata: { name: DEFAULT_VALIDATOR_NAME, labels: { ...pick(base.metadata?.labels, 'app'), [TAG_LABEL]: DEFAULT_TAG, [REVISION_LABEL]: revision } },
    webhooks: base.webhooks.map((wh) => ({ ...wh })),
  };
}

/** The injector with every webhook selecting nothing (the `default` tag has taken its job). */
export function deactivated(config: V1MutatingWebhookConfiguration): V1MutatingWebhookConfiguration {
  return {
    ...config,
    webhooks: (config.webhooks ?? []).map((wh) => ({ ...wh, namespaceSelector: { matchLabels: { ...NEVER_MATCH } }, objectSelector: { matchLabels: { ...NEVER_MATCH } } })),
  };
}

function pick(labels: Record<string, string> | undefined, key: string): Record<string, string> {
  return labels?.[key] !== undefined ? { [key]: labels[key] } : {};
}
