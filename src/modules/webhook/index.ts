/** The admission webhooks (injection, validation) served on the daemon's HTTPS address. */
export { HttpsHandler, HttpsRoutes, httpsRoutes, routeHttps } from './contributions';
export { AdmissionResponse, AdmissionReview, AdmissionRequest, JsonPatchOperation, MAX_ADMISSION_BODY_BYTES } from './admission';
export { ValidationWebhook, ALWAYS_REJECT_ANNOTATION } from './validation-webhook';
export { WebhookMetrics } from './metrics';
export { webhookModule } from './module';
export { MeshRoots, MeshRootsToken, REVISION_LABEL, revisionName } from './mesh-roots';
export { WebhookOptions, WebhookOptionsToken } from './options';
export { InjectionWebhookPatcher, INJECTION_WEBHOOK_SUFFIX } from './injection-webhook-patcher';
export { ValidationWebhookController } from './validation-webhook-controller';
export { RootCertPublisher, ROOT_CERT_KEY, ROOT_CERT_LABELS, SKIPPED_NAMESPACES } from './root-cert-publisher';
export { InjectionWebhook } from './injection-webhook';
export { InjectionInputsSource, INJECTION_DIRECTORY } from './injection-inputs';
export { injectPathEnvs } from './inject-path';
