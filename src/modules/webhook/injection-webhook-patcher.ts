/**
 * Keeps the caBundle of the injection webhook's MutatingWebhookConfiguration equal to the roots
 * that verify the daemon's HTTPS certificate, as the incumbent's webhook cert patcher does: the
 * configuration named INJECTION_WEBHOOK_CONFIG_NAME, and those labelled with this daemon's
 * revision (revision tags), in each of their webhooks named `...sidecar-injector.mesh.io`. It
 * re-patches when someone edits the caBundle and when the roots rotate; a configuration labelled
 * for another revision is not this daemon's to patch.
 */
import type { V1MutatingWebhookConfiguration } from '@kubernetes/client-node';
import { orchLibrary } from '../orch';
import type { AdmissionregistrationV1Api } from '@kubernetes/client-node';
import { inject, injectable } from 'inversify';
import { describeApiError, ELECTIONS, SingletonController } from '../leader-election';
import { Logging, LoggingToken, ScopedLogger } from '../logging';
import { OrchClient, statusCodeOf } from '../orch';
import { MeshRoots, MeshRootsToken, REVISION_LABEL } from './mesh-roots';
import { PatchFailure, WebhookMetrics } from './metrics';
import { WebhookOptions, WebhookOptionsToken } from './options';
import { caBundleOf, MUTATING_WEBHOOK_CONFIGURATIONS } from './resources';
import { WebhookConfigFollower } from './webhook-config-follower';

/** The webhooks of a configuration this patcher fills in end with this name. */
export const INJECTION_WEBHOOK_SUFFIX = 'sidecar-injector.mesh.io';

/** A patch that must not be retried: the configuration is not (or no longer) ours. */
class NotOurs extends Error {
  constructor(
    readonly reason: PatchFailure,
    message: string,
  ) {
    super(message);
  }
}

@injectable()
export class InjectionWebhookPatcher implements SingletonController {
  readonly election = ELECTIONS.validationController;
  readonly name = 'injection webhook caBundle patcher';
  private readonly follower: WebhookConfigFollower<V1MutatingWebhookConfiguration>;
  private readonly log: ScopedLogger;

  constructor(
    @inject(OrchClient) private readonly orch: OrchClient,
    @inject(MeshRootsToken) private readonly roots: MeshRoots,
    @inject(WebhookOptionsToken) private readonly options: WebhookOptions,
    @inject(WebhookMetrics) private readonly metrics: WebhookMetrics,
    @inject(LoggingToken) logging: Logging,
  ) {
    this.log = logging.scope('controllers');
    this.follower = new WebhookConfigFollower(orch, roots, MUTATING_WEBHOOK_CONFIGURATIONS);
  }

  start(): void {
    const api = this.orch.api(orchLibrary().AdmissionregistrationV1Api);
    this.follower.start(
      {
        reconcile: (name) => this.reconcile(api, name),
        failed: (name, err, retrying) => {
          this.log.warn(`patching MutatingWebhookConfiguration ${name} failed${retrying ? ', retrying' : ''}: ${describeApiError(err)}`);
          if (retrying) this.metrics.patchRetries.inc({ name });
        },
        // The incumbent's fast-slow limiter: quick retries first (conflicts), then once a minute.
        initialBackoffMs: 100,
        maxBackoffMs: 60_000,
      },
      (c) => this.consider(c),
      () => this.log.info('the roots changed: patching the injection webhook configurations'),
    );
  }

  stop(): void {
    this.follower.stop();
  }

  /** Queues `config` when it is one of ours and one of its webhooks lacks the current caBundle. */
  private consider(config: V1MutatingWebhookConfiguration): void {
    const name = config.metadata?.name;
    if (!name || !this.claims(config)) return;
    const bundle = caBundleOf(this.roots.servingRootsPem());
    const stale = (config.webhooks ?? []).some((w) => w.name.endsWith(INJECTION_WEBHOOK_SUFFIX) && w.clientConfig?.caBundle !== bundle);
    if (stale) this.follower.enqueue(name);
  }

  /** Named by INJECTION_WEBHOOK_CONFIG_NAME, or labelled with our revision (another revision's is checked, and refused, when patching). */
  private claims(config: V1MutatingWebhookConfiguration): boolean {
    const name = config.metadata?.name;
    const revision = config.metadata?.labels?.[REVISION_LABEL];
    return (this.options.injectionWebhookConfigName !== '' && name === this.options.injectionWebhookConfigName) || revision === this.options.revision;
  }

  private async reconcile(api: AdmissionregistrationV1Api, name: string): Promise<void> {
    this.metrics.patchAttempts.inc({ name });
    try {
      await this.patch(api, name);
    } catch (err) {
      if (err instanceof NotOurs) {
        this.metrics.patchFailures.inc({ name, reason: err.reason });
        this.log.warn(`not patching MutatingWebhookConfiguration ${name}: ${err.message}`);
        return;
      }
      this.metrics.patchFailures.inc({ name, reason: 'webhook_update_failure' });
      throw err;
    }
  }

  private async patch(api: AdmissionregistrationV1Api, name: string): Promise<void> {
    const config = this.follower.get(name);
    if (!config) throw new NotOurs('webhook_config_not_found', 'it no longer exists');
    const revision = config.metadata?.labels?.[REVISION_LABEL];
    if (revision !== undefined && revision !== this.options.revision) {
      throw new NotOurs('wrong_revision', `it is labelled ${REVISION_LABEL}=${revision}, this daemon is revision ${this.options.revision}`);
    }
    const pem = this.roots.servingRootsPem();
    if (!pem) throw new NotOurs('load_ca_bundle_failure', 'the daemon has no roots to put in caBundle');
    const bundle = caBundleOf(pem);
    const webhooks = config.webhooks ?? [];
    if (!webhooks.some((w) => w.name.endsWith(INJECTION_WEBHOOK_SUFFIX))) {
      throw new NotOurs('webhook_entry_not_found', `it has no webhook named *${INJECTION_WEBHOOK_SUFFIX}`);
    }
    if (webhooks.every((w) => !w.name.endsWith(INJECTION_WEBHOOK_SUFFIX) || w.clientConfig?.caBundle === bundle)) return;
    const updated: V1MutatingWebhookConfiguration = {
      ...config,
      webhooks: webhooks.map((w) => (w.name.endsWith(INJECTION_WEBHOOK_SUFFIX) ? { ...w, clientConfig: { ...w.clientConfig, caBundle: bundle } } : w)),
    };
    try {
      // The cached resourceVersion: an edit we have not seen yet makes this a 409, retried with the newer version.
      await api.replaceMutatingWebhookConfiguration({ name, body: updated });
    } catch (err) {
      if (statusCodeOf(err) === 404) throw new NotOurs('webhook_config_not_found', 'it no longer exists');
      throw err;
    }
    this.log.info(`patched the caBundle of MutatingWebhookConfiguration ${name}`);
  }
}
