/**
 * Publishes the mesh roots to every namespace as the incumbent's namespace controller does: a
 * ConfigMap (PILOT_CA_CERT_CONFIGMAP, `mesh-ca-root-cert`) labelled `mesh.io/config: "true"`
 * holding only `root-cert.pem`, in each namespace (new ones too), restored when someone edits
 * or deletes it, rewritten when the roots rotate. The orchestrator's own namespaces are
 * skipped (kube-system is not: node proxies may run there), as are terminating namespaces and,
 * with MESH_WATCH_NAMESPACE, every other namespace. Writes happen only when the cached
 * ConfigMap differs from what it should be.
 */
import type { V1ConfigMap, V1Namespace } from '@kubernetes/client-node';
import { orchLibrary } from '../orch';
import type { CoreV1Api } from '@kubernetes/client-node';
import { isDeepStrictEqual } from 'node:util';
import { inject, injectable } from 'inversify';
import { describeApiError, ELECTIONS, SingletonController } from '../leader-election';
import { Logging, LoggingToken, ScopedLogger } from '../logging';
import { CONFIG_MAPS, Informer, NAMESPACES, OrchClient, statusCodeOf } from '../orch';
import { MeshRoots, MeshRootsToken } from './mesh-roots';
import { WebhookOptions, WebhookOptionsToken } from './options';
import { ReconcileQueue } from './reconcile-queue';

/** The key of the roots in the ConfigMap. */
export const ROOT_CERT_KEY = 'root-cert.pem';
/** The label the ConfigMap carries. */
export const ROOT_CERT_LABELS: Readonly<Record<string, string>> = { 'mesh.io/config': 'true' };
const CACHE_SYNC_TIMEOUT_MS = 30_000;

/** The orchestrator's namespaces the roots are not published to. */
export const SKIPPED_NAMESPACES: readonly string[] = ['kube-public', 'kube-node-lease', 'local-path-storage'];

@injectable()
export class RootCertPublisher implements SingletonController {
  readonly election = ELECTIONS.namespaceController;
  readonly name = 'namespace controller (root certificate ConfigMaps)';
  private namespaces: Informer<V1Namespace> | undefined;
  private configMaps: Informer<V1ConfigMap> | undefined;
  private queue: ReconcileQueue<string> | undefined;
  private unwatchRoots: (() => void) | undefined;
  private readonly log: ScopedLogger;

  constructor(
    @inject(OrchClient) private readonly orch: OrchClient,
    @inject(MeshRootsToken) private readonly roots: MeshRoots,
    @inject(WebhookOptionsToken) private readonly options: WebhookOptions,
    @inject(LoggingToken) logging: Logging,
  ) {
    this.log = logging.scope('controllers');
  }

  start(): void {
    if (this.namespaces) return;
    const api = this.orch.api(orchLibrary().CoreV1Api);
    const name = this.options.caCertConfigMapName;
    this.queue = new ReconcileQueue<string>({
      reconcile: (ns) => this.reconcile(api, ns),
      failed: (ns, err, retrying) => this.log.warn(`ConfigMap ${ns}/${name}: ${describeApiError(err)}${retrying ? '; retrying' : '; giving up until the next change'}`),
      // The incumbent: 5 tries, 5 ms doubling.
      initialBackoffMs: 5,
      maxBackoffMs: 1000,
      maxAttempts: 5,
    });
    const watchNamespace = this.options.watchNamespace || undefined;
    const namespaces = this.orch.informer<V1Namespace>(NAMESPACES, watchNamespace ? { fieldSelector: `metadata.name=${watchNamespace}` } : {});
    const configMaps = this.orch.informer<V1ConfigMap>(CONFIG_MAPS, { fieldSelector: `metadata.name=${name}`, ...(watchNamespace ? { namespace: watchNamespace } : {}) });
    namespaces.on({
      add: (ns) => this.namespaceChanged(ns),
      update: (_old, ns) => this.namespaceChanged(ns),
    });
    configMaps.on({
      add: (cm) => this.configMapChanged(cm),
      update: (_old, cm, resync) => {
        if (!resync) this.configMapChanged(cm);
      },
      delete: (cm) => this.configMapChanged(cm),
    });
    this.unwatchRoots = this.roots.onChange(() => {
      this.log.info('the roots changed: publishing them to every namespace');
      for (const ns of namespaces.list()) this.namespaceChanged(ns);
    });
    this.namespaces = namespaces;
    this.configMaps = configMaps;
    // ConfigMaps first: a namespace reconciled before its ConfigMap is cached would be written twice.
    configMaps.start();
    namespaces.start();
  }

  stop(): void {
    this.unwatchRoots?.();
    this.namespaces?.stop();
    this.configMaps?.stop();
    this.queue?.stop();
    this.namespaces = undefined;
    this.configMaps = undefined;
    this.queue = undefined;
  }

  private namespaceChanged(ns: V1Namespace): void {
    const name = ns.metadata?.name;
    if (name && this.serves(name) && ns.status?.phase !== 'Terminating') this.queue?.add(name);
  }

  private configMapChanged(cm: V1ConfigMap): void {
    const ns = cm.metadata?.namespace;
    if (ns && this.serves(ns)) this.queue?.add(ns);
  }

  private serves(namespace: string): boolean {
    if (SKIPPED_NAMESPACES.includes(namespace)) return false;
    return !this.options.watchNamespace || this.options.watchNamespace === namespace;
  }

  private async reconcile(api: CoreV1Api, namespace: string): Promise<void> {
    const namespaces = this.namespaces;
    const configMaps = this.configMaps;
    if (!namespaces || !configMaps) return;
    // Both caches first: deciding on a partial one would write what is already there.
    const synced = await Promise.all([namespaces.waitForSync(CACHE_SYNC_TIMEOUT_MS), configMaps.waitForSync(CACHE_SYNC_TIMEOUT_MS)]);
    if (!synced.every(Boolean)) throw new Error(`the Namespace and ConfigMap caches did not sync within ${CACHE_SYNC_TIMEOUT_MS / 1000}s`);
    const ns = namespaces.get(namespace);
    if (!ns || ns.status?.phase === 'Terminating') return;
    const pem = this.roots.meshRootsPem();
    if (!pem) return;
    const name = this.options.caCertConfigMapName;
    const data = { [ROOT_CERT_KEY]: pem };
    const current = configMaps.get(name, namespace);
    if (!current) {
      try {
        await api.createNamespacedConfigMap({ namespace, body: { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, namespace, labels: { ...ROOT_CERT_LABELS } }, data } });
        this.log.info(`published the mesh roots to ConfigMap ${namespace}/${name}`);
      } catch (err) {
        // Already there (our cache is behind), or the namespace is going away: nothing to do.
        if (statusCodeOf(err) === 409 || /NamespaceTerminating|is being terminated/.test(describeApiError(err))) return;
        throw err;
      }
      return;
    }
    if (isDeepStrictEqual(current.data ?? {}, data)) return;
    await api.replaceNamespacedConfigMap({ name, namespace, body: { ...current, data } });
    this.log.info(`restored the mesh roots in ConfigMap ${namespace}/${name}`);
  }
}
