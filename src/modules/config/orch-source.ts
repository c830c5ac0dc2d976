import type { ScopedLogger } from '../logging';
import { describeResource, Informer, KeyedQueue, OrchClient, OrchObject, QueueObserver, WatchEvent } from '../orch';
import { crdNames, storageVersion } from './crd-names';
import { KindDefinition } from './kind';
import { MemoryConfigStore, SourcePart } from './memory-store';
import { ConfigChange, summarizeChanges } from './store';
import { KindRegistry, validateDocument } from './validate';

/** Every part the orchestrator source writes starts so (one part per object: `orch:Kind/ns/name`). */
export const ORCH_SOURCE_PREFIX = 'orch:';

/** One problem with one custom resource. */
export interface OrchConfigIssue {
  kind: string;
  namespace: string;
  name: string;
  field?: string;
  message: string;
}

export interface OrchConfigSourceOptions {
  client: OrchClient;
  /** The kinds to watch and validate against (the container's registry). */
  kinds: KindRegistry;
  store: MemoryConfigStore;
  logger: Pick<ScopedLogger, 'debug' | 'info' | 'warn' | 'error'>;
  /** MESH_WATCH_NAMESPACE: only this namespace; all when unset. */
  namespace?: string;
  /** Cached objects are re-examined this often (0 = never). */
  resyncMs?: number;
  /** Each watch event (pilot_k8s_cfg_events). */
  onEvent?: (kind: string, event: WatchEvent) => void;
  /** Each issue of a rejected object (pilot_total_rejected_configs). */
  onRejected?: (issue: OrchConfigIssue) => void;
  /** A batch failed to apply (controller_sync_errors_total). */
  onSyncError?: (err: unknown) => void;
  queueObserver?: QueueObserver;
}

/** Issues of one object written to the log at most; the rest are counted. */
const LOGGED_ISSUES_PER_OBJECT = 10;

/**
 * The orchestrator as a config source: every mesh kind watched as a custom resource of its
 * group (at its storage version), validated exactly as files are, and written to the store one
 * part per object. An invalid object is rejected with its issues logged and counted, and the
 * last good version of it stays served; deleting it removes it. A relist or resync of objects
 * whose resourceVersion did not move costs nothing, and equal content re-applied makes no change.
 */
export class OrchConfigSource {
  private readonly informers = new Map<string, Informer<OrchObject>>();
  private readonly queue: KeyedQueue<string>;
  /** key → the resourceVersion last handled (good or bad), so a version is judged once. */
  private readonly handled = new Map<string, string | undefined>();
  /** key → the issues of its current version, while it is rejected. */
  private readonly rejected = new Map<string, string>();
  /** Keys with a good version in the store (served, even while a newer version is rejected). */
  private readonly good = new Set<string>();
  private started = false;

  constructor(private readonly options: OrchConfigSourceOptions) {
    this.queue = new KeyedQueue<string>(
      (keys) => void this.apply(keys),
      (err) => {
        options.onSyncError?.(err);
        options.logger.error(`applying orchestrator config failed: ${(err as Error)?.stack ?? err}`);
      },
      options.queueObserver,
    );
  }

  /** Starts watching every kind; waitForSync tells when all are listed and applied. */
  start(): void {
    if (this.started) throw new Error('orchestrator config source already started');
    this.started = true;
    for (const def of this.options.kinds.all()) {
      const informer = this.options.client.informer<OrchObject>(resourceOf(def), {
        namespace: this.options.namespace,
        resyncMs: this.options.resyncMs ?? 0,
        // A kind whose definition is not installed is empty, not a reason to never be ready.
        missingIsEmpty: true,
      });
      const enqueue = (obj: OrchObject) => this.queue.add(`${def.kind}/${obj.metadata?.namespace ?? 'default'}/${obj.metadata?.name ?? ''}`);
      informer.on({
        add: (obj) => {
          this.options.onEvent?.(def.kind, 'add');
          enqueue(obj);
        },
        update: (_old, obj, resync) => {
          if (!resync) this.options.onEvent?.(def.kind, 'update');
          enqueue(obj);
        },
        delete: (obj) => {
          this.options.onEvent?.(def.kind, 'delete');
          enqueue(obj);
        },
      });
      this.informers.set(def.kind, informer);
    }
    for (const informer of this.informers.values()) informer.start();
  }

  stop(): void {
    for (const informer of this.informers.values()) informer.stop();
    this.queue.stop();
    this.started = false;
  }

  /** True once every kind is listed and its objects are in the store. */
  async waitForSync(timeoutMs: number): Promise<boolean> {
    const deadline = Date.now() + timeoutMs;
    for (const informer of this.informers.values()) if (!(await informer.waitForSync(Math.max(0, deadline - Date.now())))) return false;
    await this.queue.idle();
    return true;
  }

  /** Kinds not listed yet, with their last error, for "waiting for ..." logs. */
  unsynced(): string[] {
    return [...this.informers.values()]
      .filter((i) => !i.hasSynced())
      .map((i) => `${describeResource(i.resource)}${i.lastError ? ` (${(i.lastError as Error).message ?? i.lastError})` : ''}`);
  }

  /** The objects rejected now and why (`Kind ns/name` → issues), for debugging. */
  rejections(): Map<string, string> {
    return new Map(this.rejected);
  }

  private apply(keys: readonly string[]): ConfigChange[] {
    const batch: SourcePart[] = [];
    for (const key of keys) {
      const [kind, namespace, name] = key.split('/');
      const obj = this.informers.get(kind)?.get(name, namespace);
      const sourceId = `${ORCH_SOURCE_PREFIX}${key}`;
      if (!obj) {
        if (this.handled.delete(key)) batch.push({ sourceId, resources: null });
        this.good.delete(key);
        if (this.rejected.delete(key)) this.options.logger.info(`${kind} ${namespace}/${name} was deleted; it is no longer rejected`);
        continue;
      }
      const version = obj.metadata?.resourceVersion;
      if (this.handled.has(key) && this.handled.get(key) === version && version !== undefined) continue;
      this.handled.set(key, version);
      const result = validateDocument(obj, this.options.kinds);
      if (result.ok) {
        batch.push({ sourceId, resources: [result.resource] });
        this.good.add(key);
        if (this.rejected.delete(key)) this.options.logger.info(`${kind} ${namespace}/${name} is valid again`);
        continue;
      }
      this.reject(kind, namespace, name, result.issues, this.good.has(key));
    }
    const changes = this.options.store.applyBatch(batch);
    if (changes.length) this.options.logger.info(`orchestrator config changed: ${summarizeChanges(changes)}`);
    return changes;
  }

  private reject(kind: string, namespace: string, name: string, issues: readonly { field: string; message: string }[], keptGood: boolean): void {
    const key = `${kind}/${namespace}/${name}`;
    const note = keptGood ? 'keeping the last good version' : 'nothing of it is served';
    const lines = issues.map((i) => `${kind} ${namespace}/${name}: ${i.field ? `${i.field}: ` : ''}${i.message}`);
    issues.forEach((issue, i) => {
      if (i < LOGGED_ISSUES_PER_OBJECT) this.options.logger.error(`rejected config: ${lines[i]}; ${note}`);
      this.options.onRejected?.({ kind, namespace, name, field: issue.field || undefined, message: issue.message });
    });
    if (issues.length > LOGGED_ISSUES_PER_OBJECT) this.options.logger.error(`rejected config: ${kind} ${namespace}/${name}: ${issues.length - LOGGED_ISSUES_PER_OBJECT} more issues not shown`);
    this.rejected.set(key, lines.join('\n'));
  }
}

/** The custom resource of a kind, at the version the definitions store. */
export function resourceOf(def: KindDefinition) {
  return { group: def.group, version: storageVersion(def), plural: crdNames(def).plural, kind: def.kind, namespaced: true };
}
