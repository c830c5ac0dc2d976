import { ContainerModule } from 'inversify';
import { declareContributionPoint } from '../plugins/contribution-provider';
import { HttpsHandler } from './contributions';
import { WebhookMetrics } from './metrics';
import { ValidationWebhook } from './validation-webhook';

/** The admission webhooks the daemon serves on its HTTPS address, and their metrics. */
export function webhookModule(): ContainerModule {
  return new ContainerModule((bind) => {
    declareContributionPoint(bind, HttpsHandler);
    bind(WebhookMetrics).toSelf().inSingletonScope();
    bind(ValidationWebhook).toSelf().inSingletonScope();
    bind(HttpsHandler).toService(ValidationWebhook);
  });
}
