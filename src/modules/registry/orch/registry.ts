import { isDeepStrictEqual } from 'node:util';
import type { V1EndpointSlice, V1Namespace, V1Node, V1Pod, V1Service } from '@kubernetes/client-node';
import { inject, injectable } from 'inversify';
import { Logging, LoggingToken, ScopedLogger } from '../../logging';
import {
  describeResource,
  ENDPOINT_SLICES,
  Informer,
  KeyedQueue,
  NAMESPACES,
  NODES,
  objectKey,
  OrchClient,
  OrchMetrics,
  OrchObject,
  OrchResource,
  PODS,
  SERVICES,
  WatchEvent,
} from '../../orch';
import { ServiceEndpoint } from '../model';
import { EMPTY_PLATFORM_SNAPSHOT, PlatformRegistry, PlatformRegistryEvent, PlatformRegistrySnapshot, PlatformService } from '../platform';
import { ConvertOptions, EndpointCounts, endpointsOf, NETWORK_LABEL, SERVICE_NAME_LABEL, toPlatformService } from './convert';
import { OrchRegistryMetrics } from './metrics';

/** Bound by the daemon: `--domain`, `--clusterID`, the system namespace and the settings the registry reads. */
export const OrchRegistryOptionsToken = Symbol.for('mesh.OrchRegistryOptions');
export interface OrchRegistryOptions extends ConvertOptions {
  /** The daemon's namespace (`--namespace`): its network label is the cluster's network. */
  systemNamespace: string;
  /** MESH_WATCH_NAMESPACE: only this namespace's Services, EndpointSlices and Pods; all when empty. */
  watchNamespace: string;
  /** Cached objects are re-examined this often (0 = never). */
  resyncMs: number;
}

/** The state kept per Service (`namespace/name`). */
interface ServiceState {
  readonly host: string;
  readonly ps: PlatformService;
  readonly endpoints: ReadonlyMap<number, readonly ServiceEndpoint[]>;
  readonly counts: EndpointCounts;
}

/**
 * The `Orch` service registry: the orchestrator's Services, EndpointSlices, Pods, Nodes and
 * Namespaces, watched through informers and turned into services and endpoints. Events only
 * name the Services they may affect (a pod's services through its slices, a node's through its
 * pods); a keyed queue then rebuilds each named Service once per batch and reports what really
 * changed, so relists and resyncs of unchanged objects cause no push.
 */
@injectable()
export class OrchServiceRegistry implements PlatformRegistry {
  readonly name = 'Orch';
  private services: Informer<V1Service> | undefined;
  private slices: Informer<V1EndpointSlice> | undefined;
  private pods: Informer<V1Pod> | undefined;
  private nodes: Informer<V1Node> | undefined;
  private namespaces: Informer<V1Namespace> | undefined;
  private readonly queue: KeyedQueue<string>;
  private readonly states = new Map<string, ServiceState>();
  private current: PlatformRegistrySnapshot = EMPTY_PLATFORM_SNAPSHOT;
  private readonly listeners = new Set<(events: readonly PlatformRegistryEvent[]) => void>();
  private readonly log: ScopedLogger;
  private readonly unwatchMetrics: () => void;
  private defaultNetwork = '';
  private started = false;
  private stopped = false;

  constructor(
    @inject(OrchRegistryOptionsToken) private readonly options: OrchRegistryOptions,
    @inject(OrchClient) private readonly client: OrchClient,
    @inject(OrchMetrics) private readonly orchMetrics: OrchMetrics,
    @inject(OrchRegistryMetrics) private readonly metrics: OrchRegistryMetrics,
    @inject(LoggingToken) logging: Logging,
  ) {
    this.log = logging.scope('orch');
    this.queue = new KeyedQueue<string>(
      (keys) => this.rebuild(keys),
      (err) => {
        orchMetrics.syncErrors.inc();
        this.log.error(`orchestrator registry update failed: ${(err as Error)?.stack ?? err}`);
      },
      orchMetrics.queueObserver('orch-registry'),
    );
    this.unwatchMetrics = metrics.watch({
      notReady: () => this.sum('notReady'),
      withoutPod: () => this.sum('noPod'),
      pendingPod: () => this.sum('pendingPod'),
      podsWithoutIp: () => (this.pods?.list() ?? []).filter((p) => !p.status?.podIP && !isFinished(p)).length,
    });
  }

  /** Started and not stopped: its pod index answers for node authorization. */
  get running(): boolean {
    return this.started && !this.stopped;
  }

  snapshot(): PlatformRegistrySnapshot {
    return this.current;
  }

  onChange(listener: (events: readonly PlatformRegistryEvent[]) => void): () => void {
    const entry = (events: readonly PlatformRegistryEvent[]) => listener(events);
    this.listeners.add(entry);
    return () => void this.listeners.delete(entry);
  }

  /** Starts the informers; waitForSync tells when their first lists are in. */
  start(): void {
    if (this.started) throw new Error('the orchestrator registry is already started');
    this.started = true;
    const namespace = this.options.watchNamespace || undefined;
    const informerOptions = { namespace, resyncMs: this.options.resyncMs };
    this.services = this.watch<V1Service>(SERVICES, informerOptions, (svc) => [objectKey(svc)]);
    this.slices = this.watch<V1EndpointSlice>(ENDPOINT_SLICES, informerOptions, (slice) => serviceKeysOfSlice(slice));
    this.pods = this.watch<V1Pod>(PODS, informerOptions, (pod) => this.serviceKeysOfPod(pod));
    this.nodes = this.watch<V1Node>(NODES, { resyncMs: this.options.resyncMs }, (node) => this.serviceKeysOfNode(node));
    this.namespaces = this.watch<V1Namespace>(NAMESPACES, { resyncMs: this.options.resyncMs }, (ns) => this.serviceKeysOfNamespace(ns));
    this.slices.addIndex('service', (slice) => serviceKeysOfSlice(slice));
    this.slices.addIndex('pod', (slice) => podKeysOfSlice(slice));
    this.slices.addIndex('address', (slice) => unreferencedAddresses(slice));
    this.pods.addIndex('node', (pod) => (pod.spec?.nodeName ? [pod.spec.nodeName] : []));
    this.pods.addIndex('ip', (pod) => podIps(pod));
    for (const informer of this.informers()) informer.start();
  }

  stop(): void {
    this.stopped = true;
    for (const informer of this.informers()) informer.stop();
    this.queue.stop();
    this.unwatchMetrics();
  }

  /** True once every informer has listed and the queue has applied what they brought. */
  async waitForSync(timeoutMs: number): Promise<boolean> {
    const deadline = Date.now() + timeoutMs;
    for (const informer of this.informers()) if (!(await informer.waitForSync(Math.max(0, deadline - Date.now())))) return false;
    await this.queue.idle();
    return true;
  }

  /** Resources not listed yet, with the last error of each, for "waiting for ..." logs. */
  unsynced(): string[] {
    return this.informers()
      .filter((i) => !i.hasSynced())
      .map((i) => `${describeResource(i.resource)}${i.lastError ? ` (${(i.lastError as Error).message ?? i.lastError})` : ''}`);
  }

  /** `namespace/serviceAccount` of the pods running on `node` (not finished), for node authorization. */
  serviceAccountsOnNode(node: string): Set<string> {
    const out = new Set<string>();
    for (const pod of this.pods?.byIndex('node', node) ?? []) {
      if (isFinished(pod)) continue;
      out.add(`${pod.metadata?.namespace ?? 'default'}/${pod.spec?.serviceAccountName || 'default'}`);
    }
    return out;
  }

  private informers(): Informer<OrchObject>[] {
    return [this.services, this.slices, this.pods, this.nodes, this.namespaces].filter((i): i is Informer<OrchObject> => i !== undefined) as Informer<OrchObject>[];
  }

  /** An informer whose events are counted (pilot_k8s_reg_events) and queue the Services they name. */
  private watch<T extends OrchObject>(resource: OrchResource, options: { namespace?: string; resyncMs: number }, affected: (obj: T) => string[]): Informer<T> {
    const informer = this.client.informer<T>(resource, options);
    const count = (event: WatchEvent) => this.orchMetrics.regEvents.inc({ type: resource.kind, event });
    const enqueue = (obj: T) => {
      for (const key of affected(obj)) this.queue.add(key);
    };
    informer.on({
      add: (obj) => {
        count('add');
        enqueue(obj);
      },
      update: (old, obj, resync) => {
        if (!resync) count('update');
        // Both versions: a pod that moved node, a slice that changed service.
        enqueue(old);
        if (old !== obj) enqueue(obj);
      },
      delete: (obj) => {
        count('delete');
        enqueue(obj);
      },
    });
    return informer;
  }

  /** Services whose slices name the pod, by reference or by one of its addresses. */
  private serviceKeysOfPod(pod: V1Pod): string[] {
    const keys = new Set<string>();
    const slices = new Set(this.slices?.byIndex('pod', objectKey(pod)) ?? []);
    for (const ip of podIps(pod)) for (const slice of this.slices?.byIndex('address', `${pod.metadata?.namespace}/${ip}`) ?? []) slices.add(slice);
    for (const slice of slices) for (const key of serviceKeysOfSlice(slice)) keys.add(key);
    return [...keys];
  }

  /** Services with endpoints on the node: its labels give their locality. */
  private serviceKeysOfNode(node: V1Node): string[] {
    const keys = new Set<string>();
    for (const pod of this.pods?.byIndex('node', node.metadata?.name ?? '') ?? []) for (const key of this.serviceKeysOfPod(pod)) keys.add(key);
    return [...keys];
  }

  /** The system namespace's network label is the network of every endpoint without its own. */
  private serviceKeysOfNamespace(ns: V1Namespace): string[] {
    if (ns.metadata?.name !== this.options.systemNamespace) return [];
    const network = this.namespaces?.get(this.options.systemNamespace)?.metadata?.labels?.[NETWORK_LABEL] ?? '';
    if (network === this.defaultNetwork) return [];
    this.defaultNetwork = network;
    return (this.services?.list() ?? []).map((s) => objectKey(s));
  }

  /** Rebuilds the named Services and publishes one snapshot and one event batch for what changed. */
  private rebuild(keys: readonly string[]): void {
    const events: PlatformRegistryEvent[] = [];
    let withNoPods = 0;
    for (const key of keys) {
      const prev = this.states.get(key);
      const [namespace, name] = key.split('/');
      const svc = this.services?.get(name, namespace);
      if (!svc) {
        if (prev) {
          this.states.delete(key);
          events.push({ host: prev.host, what: 'service', type: 'deleted' });
        }
        continue;
      }
      const ps = toPlatformService(svc, this.options);
      const slices = this.slices?.byIndex('service', key) ?? [];
      const built = endpointsOf(ps, svc, slices, this.lookups(), this.options);
      withNoPods += built.counts.noPod;
      const host = ps.service.hostname;
      if (!prev) {
        this.states.set(key, { host, ps, endpoints: built.endpoints, counts: built.counts });
        events.push({ host, what: 'service', type: 'added' });
        continue;
      }
      // Unchanged parts keep their objects, so the push's registry diff sees them as the same.
      const serviceChanged = prev.host !== host || !isDeepStrictEqual(prev.ps, ps);
      const endpointsChanged = !isDeepStrictEqual(prev.endpoints, built.endpoints);
      this.states.set(key, {
        host,
        ps: serviceChanged ? ps : prev.ps,
        endpoints: endpointsChanged ? built.endpoints : prev.endpoints,
        counts: built.counts,
      });
      if (prev.host !== host) events.push({ host: prev.host, what: 'service', type: 'deleted' }, { host, what: 'service', type: 'added' });
      else if (serviceChanged) events.push({ host, what: 'service', type: 'updated' });
      else if (endpointsChanged) events.push({ host, what: 'endpoints', type: 'updated' });
    }
    if (withNoPods > 0) this.metrics.endpointsWithNoPods.inc(withNoPods);
    if (events.length === 0) return;
    this.publish();
    for (const listener of [...this.listeners]) {
      try {
        listener(events);
      } catch (err) {
        this.log.error(`orchestrator registry listener failed: ${(err as Error)?.stack ?? err}`);
      }
    }
  }

  private publish(): void {
    const services = new Map<string, PlatformService>();
    const endpoints = new Map<string, ReadonlyMap<number, readonly ServiceEndpoint[]>>();
    // Two Services cannot share a host (name and namespace make it), so no conflicts here.
    for (const state of [...this.states.values()].sort((a, b) => (a.host < b.host ? -1 : a.host > b.host ? 1 : 0))) {
      services.set(state.host, state.ps);
      endpoints.set(state.host, state.endpoints);
    }
    this.current = { services, endpoints };
  }

  private lookups() {
    const pods = this.pods;
    const nodes = this.nodes;
    return {
      pod: (namespace: string, name: string) => pods?.get(name, namespace),
      podByIp: (ip: string) => pods?.byIndex('ip', ip).find((p) => !isFinished(p)),
      node: (name: string) => nodes?.get(name),
      defaultNetwork: this.defaultNetwork,
    };
  }

  private sum(field: keyof EndpointCounts): number {
    let n = 0;
    for (const state of this.states.values()) n += state.counts[field];
    return n;
  }
}

/** `namespace/service` of the Service a slice belongs to (its service-name label). */
function serviceKeysOfSlice(slice: V1EndpointSlice): string[] {
  const name = slice.metadata?.labels?.[SERVICE_NAME_LABEL];
  return name ? [`${slice.metadata?.namespace}/${name}`] : [];
}

/** `namespace/name` of the pods a slice's endpoints name. */
function podKeysOfSlice(slice: V1EndpointSlice): string[] {
  const keys = new Set<string>();
  for (const ep of slice.endpoints ?? []) {
    if (ep.targetRef?.kind === 'Pod' && ep.targetRef.name) keys.add(`${ep.targetRef.namespace || slice.metadata?.namespace}/${ep.targetRef.name}`);
  }
  return [...keys];
}

/** `namespace/address` of endpoints that name no pod: their pod is looked up by address. */
function unreferencedAddresses(slice: V1EndpointSlice): string[] {
  const out = new Set<string>();
  for (const ep of slice.endpoints ?? []) if (!ep.targetRef) for (const a of ep.addresses ?? []) out.add(`${slice.metadata?.namespace}/${a}`);
  return [...out];
}

function podIps(pod: V1Pod): string[] {
  const ips = new Set<string>();
  if (pod.status?.podIP) ips.add(pod.status.podIP);
  for (const p of pod.status?.podIPs ?? []) if (p.ip) ips.add(p.ip);
  return [...ips];
}

function isFinished(pod: V1Pod): boolean {
  return pod.status?.phase === 'Succeeded' || pod.status?.phase === 'Failed';
}
