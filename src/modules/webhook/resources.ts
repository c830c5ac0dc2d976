import { OrchResource } from '../orch';

/** The orchestrator resources the trust plumbing watches. */
export const MUTATING_WEBHOOK_CONFIGURATIONS: OrchResource = {
  group: 'admissionregistration.k8s.io',
  version: 'v1',
  plural: 'mutatingwebhookconfigurations',
  kind: 'MutatingWebhookConfiguration',
  namespaced: false,
};

export const VALIDATING_WEBHOOK_CONFIGURATIONS: OrchResource = {
  group: 'admissionregistration.k8s.io',
  version: 'v1',
  plural: 'validatingwebhookconfigurations',
  kind: 'ValidatingWebhookConfiguration',
  namespaced: false,
};


/** The caBundle field's form: base64 of the PEM bytes. */
export function caBundleOf(pem: string): string {
  return Buffer.from(pem, 'utf8').toString('base64');
}
