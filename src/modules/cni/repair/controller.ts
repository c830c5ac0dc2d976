import type * as k8s from '@kubernetes/client-node';
import { orchLibrary } from '../../orch';
import type { ScopedLogger } from '../../logging';
import { isBrokenPod } from './broken-pod';
import { podFieldSelector, RepairOptions } from './options';

export type RepairAction = 'label' | 'delete';

/** The logging the controller does (a ScopedLogger, e.g. of scope `cni-agent`). */
export type RepairLogger = Pick<ScopedLogger, 'debug' | 'info' | 'warn' | 'error'>;

/** Where repairs are counted (mesh_cni_repair_pods_repaired_total{type}). */
export interface RepairSink {
  countRepaired(type: RepairAction): void;
}

export interface RepairTiming {
  /** Delay before listing and watching again after the API failed; doubles up to restartDelayMaxMs. */
  restartDelayMs: number;
  restartDelayMaxMs: number;
  /** Delay before retrying a failed label or delete; doubles with each attempt. */
  retryDelayMs: number;
  /** Attempts per pod version before giving up until the pod changes (the incumbent's 5). */
  maxAttempts: number;
}

const DEFAULT_TIMING: RepairTiming = { restartDelayMs: 1000, restartDelayMaxMs: 30_000, retryDelayMs: 500, maxAttempts: 5 };

/** What the controller knows about one broken pod (by UID: a pod re-created under the same name is another pod). */
interface PodState {
  readonly namespace: string;
  readonly name: string;
  /** A label or delete call is in flight. */
  busy: boolean;
  /** The pod changed while busy: look at its latest version afterwards. */
  changed: boolean;
  /**
   * Done for this pod: `labelled` until a version carrying the label arrives (events already
   * queued may predate the patch), `deleted` until the pod is gone, `reported` when no action
   * is configured.
   */
  outcome?: 'labelled' | 'deleted' | 'reported';
  attempts: number;
  /** resourceVersion at which the attempts ran out; tried again once the pod changes. */
  gaveUpAt?: string;
  retry?: NodeJS.Timeout;
}

/**
 * Finds pods broken by the race between the CNI plug-in install and pod creation (their
 * validation init container crash-loops), and labels or deletes them so they are re-created
 * with the plug-in in place. Lists and watches the managed node's pods through the
 * orchestrator API; API failures are logged and retried, never fatal.
 */
export class RepairController {
  private readonly timing: RepairTiming;
  private readonly api: k8s.CoreV1Api;
  private readonly informer: k8s.ListWatch<k8s.V1Pod>;
  private readonly pods = new Map<string, PodState>();
  private readonly inFlight = new Set<Promise<void>>();
  private readonly action: RepairAction | undefined;
  private starting?: Promise<void>;
  private restartTimer?: NodeJS.Timeout;
  private restartDelayMs: number;
  /** When the informer was last (re)started, to tell a failing restart from a watch that ran well for a while. */
  private startedAt = 0;
  private stopped = false;

  constructor(
    private readonly options: RepairOptions,
    kubeConfig: k8s.KubeConfig,
    private readonly sink: RepairSink,
    private readonly log: RepairLogger,
    timing: Partial<RepairTiming> = {},
  ) {
    this.timing = { ...DEFAULT_TIMING, ...timing };
    this.restartDelayMs = this.timing.restartDelayMs;
    // Deleting wins when both are set, as with the incumbent: a deleted pod needs no label.
    this.action = options.deletePods ? 'delete' : options.labelPods ? 'label' : undefined;
    this.api = kubeConfig.makeApiClient(orchLibrary().CoreV1Api);
    const fieldSelector = podFieldSelector(options) || undefined;
    const labelSelector = options.labelSelectors || undefined;
    const list = async () => {
      const pods = await this.api.listPodForAllNamespaces({ fieldSelector, labelSelector });
      this.restartDelayMs = this.timing.restartDelayMs;
      return pods;
    };
    // ListWatch rather than makeInformer: only it passes a field selector to the watch.
    const { ListWatch, Watch } = orchLibrary();
    this.informer = new ListWatch<k8s.V1Pod>('/api/v1/pods', new Watch(kubeConfig), list, false, labelSelector, fieldSelector);
    this.informer.on('add', (pod) => this.reconcile(pod));
    this.informer.on('update', (pod) => this.reconcile(pod));
    this.informer.on('delete', (pod) => this.forget(pod));
    this.informer.on('error', (err) => this.onInformerError(err));
  }

  /** Lists the pods (repairing those already broken) and starts watching; resolves once listed or failed (then retried). */
  async start(): Promise<void> {
    if (!this.options.enabled) {
      this.log.info('CNI race repair is disabled');
      return;
    }
    this.describeOptions();
    await this.startInformer();
  }

  /** Stops watching and retrying; waits for label and delete calls already made. */
  async stop(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.restartTimer);
    for (const state of this.pods.values()) clearTimeout(state.retry);
    await this.informer.stop();
    // A start in progress sets up its watch after stop() aborted the previous one.
    await this.starting;
    await this.informer.stop();
    await Promise.allSettled([...this.inFlight]);
  }

  private describeOptions(): void {
    const o = this.options;
    const what =
      this.action === 'delete'
        ? `deleting broken pods${o.labelPods ? ' (labelling is off while deleting is on)' : ''}`
        : this.action === 'label'
          ? `labelling broken pods with ${o.labelKey}=${o.labelValue}`
          : 'reporting broken pods only (neither labelling nor deleting is enabled)';
    this.log.info(`starting CNI race repair: ${what}`, {
      node: o.nodeName || '(all nodes)',
      fieldSelector: podFieldSelector(o),
      labelSelector: o.labelSelectors,
      sidecarAnnotation: o.sidecarAnnotation,
      initContainer: o.initContainerName,
      exitCode: o.initContainerExitCode,
      terminationMessage: o.initContainerTerminationMessage,
    });
  }

  private reconcile(pod: k8s.V1Pod): void {
    if (this.stopped) return;
    const uid = pod.metadata?.uid;
    const namespace = pod.metadata?.namespace ?? '';
    const name = pod.metadata?.name ?? '';
    if (!uid || !name) return;
    let state = this.pods.get(uid);
    if (!isBrokenPod(pod, this.options)) {
      if (state && !state.busy) this.drop(uid, state);
      return;
    }
    if (!state) {
      state = { namespace, name, busy: false, changed: false, attempts: 0 };
      this.pods.set(uid, state);
    }
    if (state.busy) {
      state.changed = true;
      return;
    }
    if (state.retry) return; // the retry looks at the latest version
    const version = pod.metadata?.resourceVersion;
    if (state.gaveUpAt !== undefined) {
      if (state.gaveUpAt === version) return;
      state.gaveUpAt = undefined;
      state.attempts = 0;
    }
    const pretty = `${namespace}/${name}`;
    switch (this.action) {
      case undefined:
        if (state.outcome !== 'reported') {
          this.log.info(`pod detected as broken by the CNI install race; no repair action is enabled: ${pretty}`);
          state.outcome = 'reported';
        }
        return;
      case 'label':
        if (hasKey(pod.metadata?.labels, this.options.labelKey)) {
          // Labelled (by us or anyone): nothing to do, and a later removal gets it labelled again.
          this.drop(uid, state);
          return;
        }
        if (state.outcome === 'labelled') return;
        break;
      case 'delete':
        if (state.outcome === 'deleted') return;
        if (pod.metadata?.deletionTimestamp) {
          this.log.debug(`broken pod is already being deleted: ${pretty}`);
          return;
        }
        break;
    }
    this.repair(this.action, pod, uid, state);
  }

  private repair(action: RepairAction, pod: k8s.V1Pod, uid: string, state: PodState): void {
    state.busy = true;
    const pretty = `${state.namespace}/${state.name}`;
    const run = (async () => {
      try {
        if (action === 'label') await this.label(state, pretty);
        else await this.delete(pod, uid, state, pretty);
        state.outcome = action === 'label' ? 'labelled' : 'deleted';
        state.attempts = 0;
        this.sink.countRepaired(action);
      } catch (err) {
        this.onRepairError(action, pod, state, pretty, err);
      } finally {
        state.busy = false;
        if (state.changed) {
          state.changed = false;
          this.reconcileLatest(uid, state);
        }
      }
    })();
    this.inFlight.add(run);
    void run.finally(() => this.inFlight.delete(run));
  }

  private async label(state: PodState, pretty: string): Promise<void> {
    const { labelKey, labelValue } = this.options;
    this.log.info(`pod detected as broken by the CNI install race, labelling it ${labelKey}=${labelValue}: ${pretty}`);
    // Through pods/status, as the incumbent does: it may change labels and needs less privilege than pods.
    await this.api.patchNamespacedPodStatus(
      { name: state.name, namespace: state.namespace, body: { metadata: { labels: { [labelKey]: labelValue } } } },
      orchLibrary().setHeaderOptions('Content-Type', orchLibrary().PatchStrategy.MergePatch),
    );
  }

  private async delete(pod: k8s.V1Pod, uid: string, state: PodState, pretty: string): Promise<void> {
    this.log.info(`pod detected as broken by the CNI install race, deleting it: ${pretty}`);
    // Preconditions: delete the version judged broken, not a successor that may have recovered.
    await this.api.deleteNamespacedPod({
      name: state.name,
      namespace: state.namespace,
      body: { preconditions: { uid, resourceVersion: pod.metadata?.resourceVersion } },
    });
  }

  private onRepairError(action: RepairAction, pod: k8s.V1Pod, state: PodState, pretty: string, err: unknown): void {
    const code = err instanceof orchLibrary().ApiException ? err.code : undefined;
    if (code === 404) {
      this.log.info(`broken pod is gone before it could be repaired: ${pretty}`);
      return;
    }
    if (code === 409 && action === 'delete') {
      // The pod changed since it was judged broken; its new version, arriving by the watch, is judged again.
      this.log.info(`broken pod changed before it could be deleted; judging its new version: ${pretty}`);
      return;
    }
    if (this.stopped) return;
    state.attempts++;
    const why = describeError(err);
    if (state.attempts >= this.timing.maxAttempts) {
      state.gaveUpAt = pod.metadata?.resourceVersion;
      this.log.error(`failed to ${action} broken pod ${pretty} (attempt ${state.attempts}, giving up until it changes): ${why}`);
      return;
    }
    const delay = this.timing.retryDelayMs * 2 ** (state.attempts - 1);
    this.log.warn(`failed to ${action} broken pod ${pretty} (attempt ${state.attempts}, retrying in ${delay}ms): ${why}`);
    const uid = pod.metadata?.uid ?? '';
    state.retry = setTimeout(() => {
      state.retry = undefined;
      this.reconcileLatest(uid, state);
    }, delay);
  }

  /** Looks at the newest version the informer holds, if that pod still exists. */
  private reconcileLatest(uid: string, state: PodState): void {
    const latest = this.informer.get(state.name, state.namespace);
    if (latest && latest.metadata?.uid === uid) this.reconcile(latest);
  }

  private forget(pod: k8s.V1Pod): void {
    const uid = pod.metadata?.uid;
    const state = uid ? this.pods.get(uid) : undefined;
    if (uid && state) this.drop(uid, state);
  }

  private drop(uid: string, state: PodState): void {
    clearTimeout(state.retry);
    this.pods.delete(uid);
  }

  private onInformerError(err: unknown): void {
    if (this.stopped) return; // stopping aborts the watch, which reports an error
    // After a long healthy run, a failure starts the backoff afresh.
    if (Date.now() - this.startedAt > this.timing.restartDelayMaxMs) this.restartDelayMs = this.timing.restartDelayMs;
    const delay = this.restartDelayMs;
    this.restartDelayMs = Math.min(this.restartDelayMs * 2, this.timing.restartDelayMaxMs);
    this.log.warn(`listing or watching pods failed, retrying in ${delay}ms: ${describeError(err)}`);
    clearTimeout(this.restartTimer);
    this.restartTimer = setTimeout(() => {
      if (!this.stopped) void this.startInformer();
    }, delay);
  }

  /** Lists (unless it can resume the watch) and watches; a failure, reported or thrown, is retried later. */
  private startInformer(): Promise<void> {
    this.startedAt = Date.now();
    this.starting = this.informer.start().catch((err: unknown) => this.onInformerError(err));
    return this.starting;
  }
}

function hasKey(map: Record<string, string> | undefined, key: string): boolean {
  return map !== undefined && Object.prototype.hasOwnProperty.call(map, key);
}

/** The message of a Status object, parsed or still JSON text. */
function statusMessage(body: unknown): string | undefined {
  let status = body;
  if (typeof body === 'string') {
    try {
      status = JSON.parse(body);
    } catch {
      return body || undefined;
    }
  }
  const message = (status as { message?: unknown } | undefined)?.message;
  return typeof message === 'string' ? message : undefined;
}

function describeError(err: unknown): string {
  if (err instanceof orchLibrary().ApiException) return `HTTP ${err.code}: ${statusMessage(err.body) ?? err.message}`;
  // The watch reports a refused request as an Error carrying only the status.
  const statusCode = (err as { statusCode?: unknown } | undefined)?.statusCode;
  if (err instanceof Error && typeof statusCode === 'number') return `HTTP ${statusCode}: ${err.message}`;
  return err instanceof Error ? err.message : String(err);
}
