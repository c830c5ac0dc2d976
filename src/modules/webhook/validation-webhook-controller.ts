/**
 * Keeps the validating webhook configuration (VALIDATION_WEBHOOK_CONFIG_NAME, and those
 * labelled with this daemon's revision) as the incumbent's validation controller does: every
 * webhook's caBundle equal to the roots verifying the daemon's HTTPS certificate, and the
 * failure policy switched to Fail (fail-closed) only once the API server is seen to really call
 * the webhook: a dry-run create of an invalid Gateway must come back "denied the request".
 * Until then the policy the installer wrote (Ignore: fail-open) stays, so a daemon that is not
 * reachable yet does not block every mesh resource.
 */
import type { V1ValidatingWebhookConfiguration } from '@kubernetes/client-node';
import { orchLibrary } from '../orch';
import type { AdmissionregistrationV1Api, CustomObjectsApi } from '@kubernetes/client-node';
import { inject, injectable } from 'inversify';
import { describeApiError, ELECTIONS, SingletonController } from '../leader-election';
import { Logging, LoggingToken, ScopedLogger } from '../logging';
import { OrchApiError, OrchClient, statusCodeOf } from '../orch';
import { MeshRoots, MeshRootsToken, REVISION_LABEL } from './mesh-roots';
import { WebhookMetrics } from './metrics';
import { WebhookOptions, WebhookOptionsToken } from './options';
import { caBundleOf, VALIDATING_WEBHOOK_CONFIGURATIONS } from './resources';
import { ALWAYS_REJECT_ANNOTATION } from './validation-webhook';
import { WebhookConfigFollower } from './webhook-config-follower';

const DENIED = 'denied the request';
const MISSING_RESOURCE = 'the server could not find the requested resource';
const NO_DRY_RUN = 'does not support dry run';

/** Not an error of the controller: fail-closed must wait; the key is tried again with backoff. */
class NotReadyForFailClose extends Error {}

@injectable()
export class ValidationWebhookController implements SingletonController {
  readonly election = ELECTIONS.validationController;
  readonly name = 'validation webhook controller';
  private readonly follower: WebhookConfigFollower<V1ValidatingWebhookConfiguration>;
  /** Seen once: the webhook refuses invalid config when the API server calls it. */
  private rejectsInvalidConfig = false;
  /** Why the last dry run did not show that. */
  private notReadyBecause = '';
  private readonly log: ScopedLogger;

  constructor(
    @inject(OrchClient) private readonly orch: OrchClient,
    @inject(MeshRootsToken) private readonly roots: MeshRoots,
    @inject(WebhookOptionsToken) private readonly options: WebhookOptions,
    @inject(WebhookMetrics) private readonly metrics: WebhookMetrics,
    @inject(LoggingToken) logging: Logging,
  ) {
    this.log = logging.scope('validationController');
    this.follower = new WebhookConfigFollower(orch, roots, VALIDATING_WEBHOOK_CONFIGURATIONS);
  }

  start(): void {
    if (this.options.validationWebhookConfigName === '') return;
    const admission = this.orch.api(orchLibrary().AdmissionregistrationV1Api);
    const objects = this.orch.api(orchLibrary().CustomObjectsApi);
    this.follower.start(
      {
        reconcile: (name) => this.reconcile(admission, objects, name),
        failed: (name, err) => {
          if (err instanceof NotReadyForFailClose) this.log.info(`ValidatingWebhookConfiguration ${name}: not ready to switch to fail-closed: ${err.message}`);
          else this.log.warn(`ValidatingWebhookConfiguration ${name}: ${describeApiError(err)}; retrying`);
        },
        // The incumbent's: exponential from 100 ms to a minute (the daemon's own address may take seconds to be reachable).
        initialBackoffMs: 100,
        maxBackoffMs: 60_000,
      },
      (c) => this.consider(c),
      () => this.log.info('the roots changed: updating the validating webhook configurations'),
    );
  }

  stop(): void {
    this.follower.stop();
  }

  private consider(config: V1ValidatingWebhookConfiguration): void {
    const name = config.metadata?.name;
    if (!name || !this.claims(config)) return;
    if (this.upToDate(config)) return;
    this.follower.enqueue(name);
  }

  /** Named by VALIDATION_WEBHOOK_CONFIG_NAME (unless labelled for another revision), or labelled with our revision. */
  private claims(config: V1ValidatingWebhookConfiguration): boolean {
    const revision = config.metadata?.labels?.[REVISION_LABEL];
    if (revision !== undefined) return revision === this.options.revision;
    return config.metadata?.name === this.options.validationWebhookConfigName;
  }

  private upToDate(config: V1ValidatingWebhookConfiguration): boolean {
    const bundle = caBundleOf(this.roots.servingRootsPem());
    return (config.webhooks ?? []).every((w) => w.clientConfig?.caBundle === bundle && (!this.rejectsInvalidConfig || w.failurePolicy === 'Fail'));
  }

  private async reconcile(admission: AdmissionregistrationV1Api, objects: CustomObjectsApi, name: string): Promise<void> {
    const config = this.follower.get(name);
    if (!config) {
      this.log.info(`not patching ValidatingWebhookConfiguration ${name}: it no longer exists`);
      return;
    }
    const pem = this.roots.servingRootsPem();
    if (!pem) {
      // Nothing to retry until the roots change (which queues every configuration again).
      this.metrics.validationConfigLoadError.inc({ reason: 'missing_ca_bundle' });
      this.log.error(`cannot patch ValidatingWebhookConfiguration ${name}: the daemon has no roots for its caBundle`);
      return;
    }
    const ready = await this.readyForFailClose(objects);
    const bundle = caBundleOf(pem);
    const webhooks = config.webhooks ?? [];
    const dirty = webhooks.some((w) => w.clientConfig?.caBundle !== bundle || (ready && w.failurePolicy !== 'Fail'));
    if (dirty) {
      const updated: V1ValidatingWebhookConfiguration = {
        ...config,
        webhooks: webhooks.map((w) => ({ ...w, clientConfig: { ...w.clientConfig, caBundle: bundle }, ...(ready ? { failurePolicy: 'Fail' } : {}) })),
      };
      try {
        await admission.replaceValidatingWebhookConfiguration({ name, body: updated });
      } catch (err) {
        if (statusCodeOf(err) === 404) return;
        this.metrics.validationConfigUpdateError.inc({ reason: reasonOf(err) });
        throw err;
      }
      this.metrics.validationConfigUpdates.inc();
      this.log.info(`updated ValidatingWebhookConfiguration ${name} (caBundle${ready ? ', failurePolicy Fail' : ''})`);
    }
    if (!ready) throw new NotReadyForFailClose(this.notReadyBecause);
  }

  /** Once true, stays true: the incumbent dry-runs until the first rejection, then switches every configuration. */
  private async readyForFailClose(objects: CustomObjectsApi): Promise<boolean> {
    if (this.rejectsInvalidConfig) return true;
    const because = await this.dryRunInvalidGateway(objects);
    if (because !== undefined) {
      this.notReadyBecause = because;
      return false;
    }
    this.log.info('the webhook rejected invalid config: switching validation to fail-closed');
    this.rejectsInvalidConfig = true;
    // Every configuration: one may be up to date on caBundle and still wait for Fail.
    for (const c of this.follower.list()) this.consider(c);
    return true;
  }

  /** Undefined when invalid config is refused as it should be; else why not. */
  private async dryRunInvalidGateway(objects: CustomObjectsApi): Promise<string | undefined> {
    const namespace = this.options.systemNamespace;
    const body = {
      apiVersion: 'networking.mesh.io/v1',
      kind: 'Gateway',
      metadata: { name: 'invalid-gateway', namespace, labels: { [REVISION_LABEL]: this.options.revision }, annotations: { [ALWAYS_REJECT_ANNOTATION]: 'true' } },
      spec: {},
    };
    const target = { group: 'networking.mesh.io', version: 'v1', namespace, plural: 'gateways', body, dryRun: 'All' };
    try {
      try {
        await objects.createNamespacedCustomObject(target);
      } catch (err) {
        // Someone created one for real: a dry-run update asks the webhook just as well.
        if (statusCodeOf(err) !== 409) throw err;
        await objects.replaceNamespacedCustomObject({ ...target, name: body.metadata.name });
      }
      return 'the dry run of an invalid Gateway was not rejected';
    } catch (err) {
      const message = describeApiError(err);
      if (message.includes(DENIED)) return undefined;
      if (statusCodeOf(err) === 404 || message.includes(MISSING_RESOURCE)) {
        this.log.warn('the Gateway resource is not served (CRDs not installed?): cannot check validation; assuming it works');
        return undefined;
      }
      if (message.includes(NO_DRY_RUN)) {
        this.log.warn(`a validating webhook does not support dry runs: cannot check validation; assuming it works (${message})`);
        return undefined;
      }
      return `the dry run of an invalid Gateway was rejected for another reason: ${message}`;
    }
  }
}

/** The Status reason of an API error (`Conflict`, `Forbidden`...), as the incumbent labels update errors. */
function reasonOf(err: unknown): string {
  if (err instanceof OrchApiError && err.reason) return err.reason;
  const body = (err as { body?: unknown }).body;
  try {
    const status = (typeof body === 'string' ? JSON.parse(body) : body) as { reason?: unknown } | undefined;
    if (typeof status?.reason === 'string' && status.reason !== '') return status.reason;
  } catch {
    // not a Status
  }
  const code = statusCodeOf(err);
  return code ? String(code) : 'Unknown';
}
