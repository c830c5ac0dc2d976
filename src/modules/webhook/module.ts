import { ContainerModule } from 'inversify';
import { SingletonController } from '../leader-election';
import { declareContributionPoint } from '../plugins/contribution-provider';
import { HttpsHandler } from './contributions';
import { InjectionInputsSource } from './injection-inputs';
import { InjectionWebhook } from './injection-webhook';
import { InjectionWebhookPatcher } from './injection-webhook-patcher';
import { WebhookMetrics } from './metrics';
import { RootCertPublisher } from './root-cert-publisher';
import { ValidationWebhook } from './validation-webhook';
import { ValidationWebhookController } from './validation-webhook-controller';

/**
 * The admission webhooks the daemon serves on its HTTPS address, their metrics, and the trust
 * plumbing the leader runs (webhook caBundles, the root certificate in every namespace). The
 * daemon binds WebhookOptionsToken and MeshRootsToken.
 */
export function webhookModule(): ContainerModule {
  return new ContainerModule((bind) => {
    declareContributionPoint(bind, HttpsHandler);
    bind(WebhookMetrics).toSelf().inSingletonScope();
    bind(ValidationWebhook).toSelf().inSingletonScope();
    bind(HttpsHandler).toService(ValidationWebhook);
    bind(InjectionInputsSource).toSelf().inSingletonScope();
    bind(InjectionWebhook).toSelf().inSingletonScope();
    bind(HttpsHandler).toService(InjectionWebhook);

    for (const controller of [InjectionWebhookPatcher, ValidationWebhookController, RootCertPublisher]) {
      bind(controller).toSelf().inSingletonScope();
      bind(SingletonController).toService(controller);
    }
  });
}
