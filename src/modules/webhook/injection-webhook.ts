/**
 * The mutating admission webhook (`/inject`, and `/inject/...` with the incumbent's path
 * parameters): a pod created through the orchestrator API is injected by the sidecar injector
 * with the current injection config and its namespace's labels (read through the orchestrator
 * client), and the answer carries the JSON patch from the pod as admitted to the injected one.
 * A pod the policy leaves alone is allowed unchanged (counted as skipped); a pod that cannot be
 * injected is refused with the reason (the webhook configuration's failure policy does not
 * apply to a refusal). INJECT_ENABLED=false serves nothing here.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { V1Namespace } from '@kubernetes/client-node';
import { inject, injectable } from 'inversify';
import { injectionPatch, Pod, SidecarInjector } from '../inject';
import { Logging, LoggingToken, ScopedLogger } from '../logging';
import { Informer, NAMESPACES, OrchClient } from '../orch';
import { Settings, SettingsToken } from '../settings';
import { DEFAULT_CONFIG_FILE_LIMITS } from '../config';
import { AdmissionResponse, AdmissionReview, isObject, nestedDeeperThan } from './admission';
import { serveAdmission } from './admission-endpoint';
import { HttpsHandler } from './contributions';
import { injectPathEnvs } from './inject-path';
import { InjectionInputsSource } from './injection-inputs';
import { WebhookMetrics } from './metrics';
import { WebhookOptions, WebhookOptionsToken } from './options';

@injectable()
export class InjectionWebhook implements HttpsHandler {
  private namespaces: Informer<V1Namespace> | undefined;
  private readonly enabled: boolean;
  private readonly log: ScopedLogger;

  constructor(
    @inject(SidecarInjector) private readonly injector: SidecarInjector,
    @inject(InjectionInputsSource) private readonly inputs: InjectionInputsSource,
    @inject(OrchClient) private readonly orch: OrchClient,
    @inject(WebhookOptionsToken) private readonly options: WebhookOptions,
    @inject(WebhookMetrics) private readonly metrics: WebhookMetrics,
    @inject(SettingsToken) settings: Settings,
    @inject(LoggingToken) logging: Logging,
  ) {
    this.enabled = settings.bool('INJECT_ENABLED');
    this.log = logging.scope('default');
  }

  paths(): readonly string[] {
    return this.enabled ? ['/inject', '/inject/'] : [];
  }

  async start(): Promise<void> {
    if (!this.enabled) {
      this.log.info('INJECT_ENABLED=false: the injection webhook is not served');
      return;
    }
    if (this.options.onOrchestrator) {
      this.namespaces = this.orch.informer<V1Namespace>(NAMESPACES);
      this.namespaces.start();
    }
    await this.inputs.start();
  }

  stop(): void {
    this.inputs.stop();
    this.namespaces?.stop();
    this.namespaces = undefined;
  }

  handle(req: IncomingMessage, res: ServerResponse, path: string): Promise<void> {
    // Every request counts, the malformed ones too (they are failures), as the incumbent counts them.
    this.metrics.injectionRequests.inc();
    const timer = this.metrics.injectionTime.startTimer();
    return serveAdmission(req, res, path, this, this.log, { httpError: () => this.metrics.injectionFailure.inc() }).finally(() => timer());
  }

  admit(review: AdmissionReview, path: string): AdmissionResponse {
    const request = review.request;
    const pod = request.object;
    const namespace = request.namespace ?? (isObject(pod) && isObject(pod.metadata) && typeof pod.metadata.namespace === 'string' ? pod.metadata.namespace : 'default');
    const where = `pod ${namespace}/${podName(pod)}`;
    const fail = (message: string): AdmissionResponse => {
      this.metrics.injectionFailure.inc();
      this.log.error(`injection of ${where} failed: ${message}`);
      return { allowed: false, message };
    };
    if (request.kind.kind !== 'Pod' || request.kind.group !== '' || request.operation !== 'CREATE') {
      this.metrics.injectionSkip.inc();
      return { allowed: true };
    }
    if (!isObject(pod)) return fail('cannot decode the pod: the request carries no object');
    if (nestedDeeperThan(pod, DEFAULT_CONFIG_FILE_LIMITS.maxDepth)) return fail(`cannot inject the pod: nested more than ${DEFAULT_CONFIG_FILE_LIMITS.maxDepth} levels deep`);
    const inputs = this.inputs.current();
    if (!inputs) return fail(`injection config not ready: ${this.inputs.why()}`);
    const labels = this.namespaces?.get(namespace)?.metadata?.labels ?? {};
    const original = asAdmitted(pod as Pod, namespace);
    let outcome;
    try {
      outcome = this.injector.injectAdmittedPod(original, { name: namespace, labels }, inputs, injectPathEnvs(path));
    } catch (err) {
      return fail((err as Error).message);
    }
    if (outcome.kind === 'skipped') {
      this.metrics.injectionSkip.inc();
      this.log.debug(`not injecting ${where}: ${outcome.reason}`);
      return { allowed: true };
    }
    const patch = injectionPatch(original, outcome.pod);
    this.metrics.injectionSuccess.inc();
    this.log.info(`injected ${where} (${patch.length} patch operations)`);
    return { allowed: true, patch };
  }
}

/**
 * The pod the patch starts from, as the incumbent takes it: without managed fields (large, and
 * no concern of injection) and with the request's namespace; the patch then leaves both alone.
 */
function asAdmitted(pod: Pod, namespace: string): Pod {
  const copy = structuredClone(pod);
  copy.metadata ??= {};
  delete copy.metadata.managedFields;
  if (!copy.metadata.namespace) copy.metadata.namespace = namespace;
  return copy;
}

/** The pod's name, or its generateName prefix (a Deployment's pods are named after admission). */
function podName(pod: unknown): string {
  const meta = isObject(pod) && isObject(pod.metadata) ? pod.metadata : {};
  if (typeof meta.name === 'string' && meta.name !== '') return meta.name;
  if (typeof meta.generateName === 'string' && meta.generateName !== '') return `${meta.generateName}***`;
  return '<unnamed>';
}
