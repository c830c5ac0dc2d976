import { inject, injectable } from 'inversify';
import { Logging, LoggingToken, ScopedLogger } from '../../logging';
import { ServiceEndpoint } from '../model';
import { PlatformRegistry, PlatformRegistryEvent, PlatformRegistrySnapshot, PlatformService } from '../platform';
import { OrchRegistryOptions, OrchRegistryOptionsToken, OrchServiceRegistry } from './registry';

type EndpointsByPort = ReadonlyMap<number, readonly ServiceEndpoint[]>;

interface Member {
  readonly clusterId: string;
  readonly registry: PlatformRegistry;
  readonly unsubscribe: () => void;
}

/**
 * The `Orch` registry as the push sees it: the local cluster's registry and those of the remote
 * clusters merged. A host served by several clusters is one service, the local cluster's
 * definition first (then the remote clusters' in cluster-ID order), with the endpoints of every
 * cluster (each labelled with its cluster by its own registry) on the ports that service has.
 * Adding or removing a cluster reports its hosts as changed, so their endpoints are pushed.
 */
@injectable()
export class MulticlusterRegistry implements PlatformRegistry {
  readonly name = 'Orch';
  private readonly members: Member[] = [];
  private readonly listeners = new Set<(events: readonly PlatformRegistryEvent[]) => void>();
  /** Merged endpoints per host and the parts they came from, so an unchanged host keeps its object. */
  private readonly merged = new Map<string, { parts: readonly EndpointsByPort[]; endpoints: EndpointsByPort }>();
  private current: PlatformRegistrySnapshot | undefined;
  private readonly log: ScopedLogger;

  constructor(
    @inject(OrchServiceRegistry) local: OrchServiceRegistry,
    @inject(OrchRegistryOptionsToken) options: OrchRegistryOptions,
    @inject(LoggingToken) logging: Logging,
  ) {
    this.log = logging.scope('orch');
    this.add(options.clusterId, local);
  }

  /** Cluster IDs merged, the local one first. */
  clusters(): string[] {
    return this.members.map((m) => m.clusterId);
  }

  snapshot(): PlatformRegistrySnapshot {
    this.current ??= this.build();
    return this.current;
  }

  onChange(listener: (events: readonly PlatformRegistryEvent[]) => void): () => void {
    const entry = (events: readonly PlatformRegistryEvent[]) => listener(events);
    this.listeners.add(entry);
    return () => void this.listeners.delete(entry);
  }

  /** Merges a remote cluster's registry (after the local one, in cluster-ID order). */
  add(clusterId: string, registry: PlatformRegistry): void {
    if (this.members.some((m) => m.clusterId === clusterId)) throw new Error(`cluster ${clusterId} is already merged`);
    const unsubscribe = registry.onChange((events) => this.changed(events.map((e) => e.host)));
    const member = { clusterId, registry, unsubscribe };
    // The first member is the local cluster; remote ones follow sorted.
    const at = this.members.length === 0 ? 0 : this.members.findIndex((m, i) => i > 0 && m.clusterId > clusterId);
    this.members.splice(at < 0 ? this.members.length : at, 0, member);
    this.changed([...registry.snapshot().services.keys()]);
  }

  /** Takes a remote cluster's services and endpoints out. */
  remove(clusterId: string): void {
    const at = this.members.findIndex((m, i) => i > 0 && m.clusterId === clusterId);
    if (at < 0) return;
    const [member] = this.members.splice(at, 1);
    member.unsubscribe();
    this.changed([...member.registry.snapshot().services.keys()]);
  }

  /** Rebuilds the view and tells listeners what `hosts` became in it. */
  private changed(hosts: readonly string[]): void {
    if (hosts.length === 0) return;
    const before = this.snapshot();
    this.current = undefined;
    const after = this.snapshot();
    const events = hostEvents(before, after, new Set(hosts));
    if (events.length === 0) return;
    for (const listener of [...this.listeners]) {
      try {
        listener(events);
      } catch (err) {
        this.log.error(`multicluster registry listener failed: ${(err as Error)?.stack ?? err}`);
      }
    }
  }

  private build(): PlatformRegistrySnapshot {
    const snapshots = this.members.map((m) => m.registry.snapshot());
    const services = new Map<string, PlatformService>();
    for (const snapshot of snapshots) for (const [host, ps] of snapshot.services) if (!services.has(host)) services.set(host, ps);
    const endpoints = new Map<string, EndpointsByPort>();
    for (const [host, ps] of services) {
      const parts = snapshots.filter((s) => s.services.has(host)).map((s) => s.endpoints.get(host) ?? EMPTY_ENDPOINTS);
      endpoints.set(host, this.endpointsOf(host, ps, parts));
    }
    for (const host of this.merged.keys()) if (!services.has(host)) this.merged.delete(host);
    const sorted = new Map([...services.entries()].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
    return { services: sorted, endpoints };
  }

  /** One cluster's endpoints as they are; several clusters' joined per port of the winning service. */
  private endpointsOf(host: string, ps: PlatformService, parts: readonly EndpointsByPort[]): EndpointsByPort {
    if (parts.length === 1) {
      this.merged.delete(host);
      return parts[0];
    }
    const cached = this.merged.get(host);
    if (cached && cached.parts.length === parts.length && cached.parts.every((p, i) => p === parts[i])) return cached.endpoints;
    const byPort = new Map<number, readonly ServiceEndpoint[]>();
    for (const port of ps.service.ports) byPort.set(port.number, parts.flatMap((p) => p.get(port.number) ?? []));
    this.merged.set(host, { parts, endpoints: byPort });
    return byPort;
  }
}

const EMPTY_ENDPOINTS: EndpointsByPort = new Map();

/** What became of `hosts` from one view to the next: a service added, deleted or changed, or only its endpoints. */
function hostEvents(before: PlatformRegistrySnapshot, after: PlatformRegistrySnapshot, hosts: ReadonlySet<string>): PlatformRegistryEvent[] {
  const events: PlatformRegistryEvent[] = [];
  for (const host of hosts) {
    const a = before.services.get(host);
    const b = after.services.get(host);
    if (!a && !b) continue;
    if (!a) events.push({ host, what: 'service', type: 'added' });
    else if (!b) events.push({ host, what: 'service', type: 'deleted' });
    else if (a !== b) events.push({ host, what: 'service', type: 'updated' });
    else if (before.endpoints.get(host) !== after.endpoints.get(host)) events.push({ host, what: 'endpoints', type: 'updated' });
  }
  return events;
}
