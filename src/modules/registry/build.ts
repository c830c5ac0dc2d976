import { ConfigResource, resourceKey } from '../config/resource';
import { ServiceEntrySpec } from '../config/kinds/service-entry';
import { WorkloadEntrySpec } from '../config/kinds/workload-entry';
import { labelsMatch, normalizeProtocol, Service, ServiceEndpoint, ServicePort } from './model';
import { PlatformRegistrySnapshot, PlatformService } from './platform';

/** An immutable view of all services and their endpoints, rebuilt when config changes. */
export interface ServiceRegistrySnapshot {
  /** Services by host name, sorted by host name. */
  readonly services: ReadonlyMap<string, Service>;
  /** Endpoints by host name, then service port number. */
  readonly endpoints: ReadonlyMap<string, ReadonlyMap<number, readonly ServiceEndpoint[]>>;
}

/** The platform registries' services (the orchestrator's), merged before ServiceEntries. */
export interface PlatformInput {
  readonly snapshots: readonly PlatformRegistrySnapshot[];
  /** PILOT_ENABLE_K8S_SELECT_WORKLOAD_ENTRIES: platform services with a selector also select WorkloadEntries. */
  readonly selectWorkloadEntries: boolean;
}

/** Decides the network of endpoints that name none (the mesh networks: fromCidr, fromRegistry). */
export interface EndpointNetworks {
  /** The network of an endpoint at `address` from registry (cluster) `registry`; '' when none claims it. */
  networkOf(address: string, registry: string): string;
}

export interface RegistryBuildOptions extends Partial<PlatformInput> {
  /** The registry (cluster ID) ServiceEntry and WorkloadEntry endpoints come from: the daemon's `--clusterID`. */
  clusterId?: string;
  networks?: EndpointNetworks;
}

/** The label that puts a workload on a network, as the incumbent's `topology.istio.io/network`. */
export const NETWORK_LABEL = 'topology.mesh.io/network';

/**
 * Builds the registry from the platform registries' services and from ServiceEntry and
 * WorkloadEntry resources. A platform service owns its host; a host declared by two
 * ServiceEntries is owned by the first in `namespace/name` order (the incumbent keeps the
 * oldest; files have no creation time). Conflicts are reported through `onConflict`.
 * A WorkloadEntry or ServiceEntry endpoint's network is its own `network`, else its network
 * label, else what the mesh networks say for its address and registry.
 */
export function buildRegistry(
  serviceEntries: readonly ConfigResource<ServiceEntrySpec>[],
  workloadEntries: readonly ConfigResource<WorkloadEntrySpec>[],
  onConflict: (host: string, kept: string, ignored: string) => void = () => undefined,
  options: RegistryBuildOptions = {},
): ServiceRegistrySnapshot {
  return new RegistryBuilder().build(serviceEntries, workloadEntries, onConflict, options);
}

/** What one ServiceEntry contributes: a service and its endpoints per host, and what they were made from. */
interface ServiceEntryPart {
  /** The WorkloadEntries a selector picked (undefined: inline endpoints). */
  selected: readonly ConfigResource<WorkloadEntrySpec>[] | undefined;
  hosts: ReadonlyArray<{ service: Service; endpoints: ReadonlyMap<number, readonly ServiceEndpoint[]> }>;
}

/**
 * buildRegistry that remembers each ServiceEntry's part between builds. A part is made again
 * only when its ServiceEntry is a new object (the config store keeps unchanged resources'
 * objects), the WorkloadEntries its selector picks are not the same objects, or the networks
 * changed. Unchanged hosts keep their Service and endpoint objects, so diffing two snapshots
 * is a comparison by identity for them: a push after one WorkloadEntry moved costs that
 * namespace's selectors, not the whole mesh's.
 */
export class RegistryBuilder {
  private parts = new Map<ConfigResource<ServiceEntrySpec>, ServiceEntryPart>();
  private namespaces = new Map<string, readonly ConfigResource<WorkloadEntrySpec>[]>();
  private order: { input: readonly ConfigResource<ServiceEntrySpec>[]; sorted: ConfigResource<ServiceEntrySpec>[] } | undefined;
  private context: { networks: EndpointNetworks | undefined; clusterId: string } | undefined;

  build(
    serviceEntries: readonly ConfigResource<ServiceEntrySpec>[],
    workloadEntries: readonly ConfigResource<WorkloadEntrySpec>[],
    onConflict: (host: string, kept: string, ignored: string) => void = () => undefined,
    options: RegistryBuildOptions = {},
  ): ServiceRegistrySnapshot {
    const clusterId = options.clusterId ?? '';
    if (this.context?.networks !== options.networks || this.context?.clusterId !== clusterId) {
      this.parts.clear();
      this.context = { networks: options.networks, clusterId };
    }
    const networkOf = (spec: WorkloadEntrySpec): string =>
      spec.network || spec.labels?.[NETWORK_LABEL] || options.networks?.networkOf(spec.address ?? '', clusterId) || '';
    const services = new Map<string, Service>();
    const endpoints = new Map<string, ReadonlyMap<number, readonly ServiceEndpoint[]>>();
    const workloadsByNamespace = groupByNamespace(workloadEntries);
    for (const snapshot of options.snapshots ?? []) {
      for (const [host, ps] of snapshot.services) {
        const existing = services.get(host);
        if (existing) {
          onConflict(host, existing.source, ps.service.source);
          continue;
        }
        services.set(host, ps.service);
        const own = snapshot.endpoints.get(host) ?? new Map<number, readonly ServiceEndpoint[]>();
        const selected = options.selectWorkloadEntries && ps.selector ? selectedWorkloadEntries(ps, workloadsByNamespace.get(ps.service.namespace) ?? []) : [];
        endpoints.set(host, selected.length ? withWorkloadEntries(ps, own, selected, networkOf) : own);
      }
    }

    // Namespaces whose WorkloadEntries are not the same objects as last time (or came or went).
    const changedNamespaces = new Set<string>();
    for (const namespace of new Set([...this.namespaces.keys(), ...workloadsByNamespace.keys()])) {
      if (!sameItems(this.namespaces.get(namespace), workloadsByNamespace.get(namespace))) changedNamespaces.add(namespace);
    }
    const parts = new Map<ConfigResource<ServiceEntrySpec>, ServiceEntryPart>();
    for (const se of this.sorted(serviceEntries)) {
      const source = resourceKey(se);
      const namespace = se.metadata.namespace;
      let part = this.parts.get(se);
      if (!part || (part.selected && changedNamespaces.has(namespace))) {
        const selected = se.spec.workloadSelector ? selectorMatches(se.spec.workloadSelector.labels, workloadsByNamespace.get(namespace) ?? []) : undefined;
        if (!part || !sameItems(part.selected, selected)) part = serviceEntryPart(se, selected, networkOf);
      }
      parts.set(se, part);
      for (const { service, endpoints: byPort } of part.hosts) {
        const existing = services.get(service.hostname);
        if (existing) {
          onConflict(service.hostname, existing.source, source);
          continue;
        }
        services.set(service.hostname, service);
        endpoints.set(service.hostname, byPort);
      }
    }
    this.parts = parts;
    this.namespaces = workloadsByNamespace;
    const sorted = new Map([...services.entries()].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
    return { services: sorted, endpoints };
  }

  /** ServiceEntries in `namespace/name` order; the last order again when the same objects come. */
  private sorted(serviceEntries: readonly ConfigResource<ServiceEntrySpec>[]): readonly ConfigResource<ServiceEntrySpec>[] {
    if (this.order && sameItems(this.order.input, serviceEntries)) return this.order.sorted;
    const keyed = serviceEntries.map((se) => ({ se, key: resourceKey(se) }));
    keyed.sort((a, b) => COLLATOR.compare(a.key, b.key));
    this.order = { input: [...serviceEntries], sorted: keyed.map((k) => k.se) };
    return this.order.sorted;
  }
}

/** The order `String.prototype.localeCompare` gives, without making a collator per comparison. */
const COLLATOR = new Intl.Collator();

function sameItems<T>(a: readonly T[] | undefined, b: readonly T[] | undefined): boolean {
  if (a === b) return true;
  if (!a || !b || a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}

/** A ServiceEntry's services and endpoints, one per host, from its inline endpoints or the WorkloadEntries its selector picked. */
function serviceEntryPart(
  se: ConfigResource<ServiceEntrySpec>,
  selected: readonly ConfigResource<WorkloadEntrySpec>[] | undefined,
  networkOf: (spec: WorkloadEntrySpec) => string,
): ServiceEntryPart {
  const spec = se.spec;
  const source = resourceKey(se);
  const ports: ServicePort[] = (spec.ports ?? []).map((p) => ({
    name: p.name,
    number: p.number,
    protocol: normalizeProtocol(p.protocol),
    targetPort: p.targetPort ?? p.number,
  }));
  const members: Member[] = selected ? selected.map(memberOf) : (spec.endpoints ?? []).map((ep, i) => ({ id: `${source}#${i}`, spec: ep }));
  const hosts = spec.hosts.map((host) => {
    const service: Service = {
      hostname: host,
      namespace: se.metadata.namespace,
      ports,
      resolution: spec.resolution ?? 'NONE',
      location: spec.location ?? 'MESH_EXTERNAL',
      addresses: spec.addresses ?? [],
      exportTo: spec.exportTo?.length ? spec.exportTo : ['*'],
      source,
    };
    const byPort = new Map<number, ServiceEndpoint[]>();
    for (const port of ports) {
      const list = members.map((m) => memberEndpoint(host, se.metadata.namespace, port, m.spec.ports?.[port.name] ?? port.targetPort, m, networkOf));
      byPort.set(port.number, list.sort(byAddressThenPort));
    }
    return { service, endpoints: byPort };
  });
  return { selected, hosts };
}

interface Member {
  id: string;
  spec: WorkloadEntrySpec;
}

/** A WorkloadEntry as an endpoint source: its key, and its spec with the merged labels. */
function memberOf(we: ConfigResource<WorkloadEntrySpec>): Member {
  return { id: resourceKey(we), spec: { ...we.spec, labels: workloadLabels(we) } };
}

/** The endpoint of `host`'s `servicePort` that `member` (a WorkloadEntry or an inline endpoint) serves at `port`. */
function memberEndpoint(host: string, namespace: string, servicePort: ServicePort, port: number, member: Member, networkOf: (spec: WorkloadEntrySpec) => string): ServiceEndpoint {
  const { spec } = member;
  return {
    hostname: host,
    servicePort,
    address: spec.address ?? '',
    port,
    labels: spec.labels ?? {},
    weight: spec.weight && spec.weight > 0 ? spec.weight : 1,
    locality: spec.locality ?? '',
    serviceAccount: spec.serviceAccount ?? 'default',
    namespace,
    network: networkOf(spec),
    workload: member.id,
  };
}

/** Endpoints by address, then port (the same collation as `localeCompare`, without a collator per comparison). */
function byAddressThenPort(a: ServiceEndpoint, b: ServiceEndpoint): number {
  return COLLATOR.compare(a.address, b.address) || a.port - b.port;
}

/** A WorkloadEntry's labels: its metadata labels, overridden by the spec's (merged once per object). */
const mergedLabels = new WeakMap<ConfigResource<WorkloadEntrySpec>, Record<string, string>>();

function workloadLabels(we: ConfigResource<WorkloadEntrySpec>): Record<string, string> {
  let labels = mergedLabels.get(we);
  if (!labels) {
    labels = { ...we.metadata.labels, ...(we.spec.labels ?? {}) };
    mergedLabels.set(we, labels);
  }
  return labels;
}

/**
 * The WorkloadEntries of one namespace a selector's labels pick, in the namespace's order.
 * Only the entries carrying the selector's rarest label are checked: a namespace's hundred
 * ServiceEntries each select a few of its hundreds of WorkloadEntries, and a push after one of
 * them moved re-selects them all.
 */
function selectorMatches(selector: Readonly<Record<string, string>> | undefined, sameNamespace: readonly ConfigResource<WorkloadEntrySpec>[]): ConfigResource<WorkloadEntrySpec>[] {
  const keys = selector ? Object.keys(selector) : [];
  if (keys.length === 0) return [...sameNamespace];
  const index = labelIndexOf(sameNamespace);
  let candidates: readonly ConfigResource<WorkloadEntrySpec>[] | undefined;
  for (const k of keys) {
    const holders = index.get(labelKey(k, selector![k]));
    if (!holders) return [];
    if (!candidates || holders.length < candidates.length) candidates = holders;
  }
  return candidates!.filter((we) => labelsMatch(selector, workloadLabels(we)));
}

/** A namespace's WorkloadEntries by label (`key`, `value`), once per list of them (a build groups them afresh). */
const labelIndexes = new WeakMap<readonly ConfigResource<WorkloadEntrySpec>[], Map<string, ConfigResource<WorkloadEntrySpec>[]>>();

function labelIndexOf(workloads: readonly ConfigResource<WorkloadEntrySpec>[]): Map<string, ConfigResource<WorkloadEntrySpec>[]> {
  let index = labelIndexes.get(workloads);
  if (!index) {
    index = new Map();
    for (const we of workloads) {
      const labels = workloadLabels(we);
      for (const k in labels) {
        const key = labelKey(k, labels[k]);
        const holders = index.get(key);
        if (holders) holders.push(we);
        else index.set(key, [we]);
      }
    }
    labelIndexes.set(workloads, index);
  }
  return index;
}

/** A NUL cannot appear in a label, so no two pairs read alike. */
function labelKey(key: string, value: string): string {
  return `${key}\u0000${value}`;
}

/** WorkloadEntries of the service's namespace whose labels its selector matches (an empty selector selects none). */
function selectedWorkloadEntries(ps: PlatformService, sameNamespace: readonly ConfigResource<WorkloadEntrySpec>[]): ConfigResource<WorkloadEntrySpec>[] {
  if (!ps.selector || Object.keys(ps.selector).length === 0) return [];
  return selectorMatches(ps.selector, sameNamespace);
}

/**
 * The service's own endpoints plus one per selected WorkloadEntry and port; the entry's port
 * is the one named like the service port, else the target port (by number, or by name in the
 * entry's ports), else the service port.
 */
function withWorkloadEntries(
  ps: PlatformService,
  own: ReadonlyMap<number, readonly ServiceEndpoint[]>,
  selected: readonly ConfigResource<WorkloadEntrySpec>[],
  networkOf: (spec: WorkloadEntrySpec) => string,
): Map<number, ServiceEndpoint[]> {
  const out = new Map<number, ServiceEndpoint[]>();
  const members = selected.map(memberOf);
  for (const port of ps.service.ports) {
    const list = [...(own.get(port.number) ?? [])];
    const target = ps.targetPorts.get(port.number);
    for (const m of members) {
      const ports = m.spec.ports ?? {};
      const number = ports[port.name] ?? (typeof target === 'number' ? target : target !== undefined ? ports[target] : undefined) ?? port.number;
      list.push(memberEndpoint(ps.service.hostname, ps.service.namespace, port, number, m, networkOf));
    }
    out.set(port.number, list.sort(byAddressThenPort));
  }
  return out;
}

function groupByNamespace<T extends ConfigResource>(resources: readonly T[]): Map<string, T[]> {
  const out = new Map<string, T[]>();
  for (const r of resources) {
    const list = out.get(r.metadata.namespace) ?? [];
    list.push(r);
    out.set(r.metadata.namespace, list);
  }
  return out;
}
