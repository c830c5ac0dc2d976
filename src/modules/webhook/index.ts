/** The admission webhooks (injection, validation) served on the daemon's HTTPS address. */
export { HttpsHandler, HttpsRoutes, httpsRoutes, routeHttps } from './contributions';
export { AdmissionResponse, AdmissionReview, AdmissionRequest, JsonPatchOperation, MAX_ADMISSION_BODY_BYTES } from './admission';
export { ValidationWebhook, ALWAYS_REJECT_ANNOTATION } from './validation-webhook';
export { WebhookMetrics } from './metrics';
export { webhookModule } from './module';
