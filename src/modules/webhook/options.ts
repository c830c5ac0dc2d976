/** Bound by the daemon: where the webhooks' and the trust plumbing's objects live and what they are called. */
export const WebhookOptionsToken = Symbol.for('mesh.WebhookOptions');
export interface WebhookOptions {
  /** Whether the daemon talks to an orchestrator (`--orchconfig`, or in-cluster). */
  onOrchestrator: boolean;
  /** The daemon's namespace (POD_NAMESPACE, `--namespace`): its injection ConfigMap, its Leases. */
  systemNamespace: string;
  /** The control plane revision (REVISION, `default` when unset). */
  revision: string;
  /** MESH_WATCH_NAMESPACE: the only namespace served when set. */
  watchNamespace: string;
  /** INJECTION_WEBHOOK_CONFIG_NAME: the MutatingWebhookConfiguration whose caBundle is kept; empty = none. */
  injectionWebhookConfigName: string;
  /** VALIDATION_WEBHOOK_CONFIG_NAME: the ValidatingWebhookConfiguration kept; empty disables. */
  validationWebhookConfigName: string;
  /** PILOT_CA_CERT_CONFIGMAP: the ConfigMap each namespace gets the mesh roots in. */
  caCertConfigMapName: string;
}
