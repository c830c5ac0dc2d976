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
  const networkOf = (spec: WorkloadEntrySpec): string =>
    spec.network || spec.labels?.[NETWORK_LABEL] || options.networks?.networkOf(spec.address ?? '', options.clusterId ?? '') || '';
  const services = new Map<string, Service>();
  const endpoints = new Map<string, ReadonlyMap<number, readonly ServiceEndpoint[]>>();
  const ordered = [...serviceEntries].sort((a, b) => resourceKey(a).localeCompare(resourceKey(b)));
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

  for (const se of ordered) {
    const spec = se.spec;
    const source = resourceKey(se);
    const ports: ServicePort[] = (spec.ports ?? []).map((p) => ({
      name: p.name,
      number: p.number,
      protocol: normalizeProtocol(p.protocol),
      targetPort: p.targetPort ?? p.number,
    }));
    const members = workloadsFor(se, workloadsByNamespace.get(se.metadata.namespace) ?? []);
    for (const host of spec.hosts) {
      const existing = services.get(host);
      if (existing) {
        onConflict(host, existing.source, source);
        continue;
      }
      services.set(host, {
        hostname: host,
        namespace: se.metadata.namespace,
        ports,
        resolution: spec.resolution ?? 'NONE',
        location: spec.location ?? 'MESH_EXTERNAL',
        addresses: spec.addresses ?? [],
        exportTo: spec.exportTo?.length ? spec.exportTo : ['*'],
        source,
      });
      const byPort = new Map<number, ServiceEndpoint[]>();
      for (const port of ports) {
        const list: ServiceEndpoint[] = [];
        for (const m of members) {
          const target = m.spec.ports?.[port.name] ?? port.targetPort;
          list.push({
            hostname: host,
            servicePort: port,
            address: m.spec.address ?? '',
            port: target,
            labels: m.spec.labels ?? {},
            weight: m.spec.weight && m.spec.weight > 0 ? m.spec.weight : 1,
            locality: m.spec.locality ?? '',
            serviceAccount: m.spec.serviceAccount ?? 'default',
            namespace: se.metadata.namespace,
            network: networkOf(m.spec),
            workload: m.id,
          });
        }
        list.sort((a, b) => a.address.localeCompare(b.address) || a.port - b.port);
        byPort.set(port.number, list);
      }
      endpoints.set(host, byPort);
    }
  }
  const sorted = new Map([...services.entries()].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
  return { services: sorted, endpoints };
}

interface Member {
  id: string;
  spec: WorkloadEntrySpec;
}

/** Inline endpoints, or the WorkloadEntries of the same namespace its selector picks. */
function workloadsFor(se: ConfigResource<ServiceEntrySpec>, sameNamespace: readonly ConfigResource<WorkloadEntrySpec>[]): Member[] {
  const spec = se.spec;
  if (spec.workloadSelector) {
    return sameNamespace
      .filter((we) => labelsMatch(spec.workloadSelector!.labels, { ...we.metadata.labels, ...(we.spec.labels ?? {}) }))
      .map((we) => ({ id: resourceKey(we), spec: { ...we.spec, labels: { ...we.metadata.labels, ...(we.spec.labels ?? {}) } } }));
  }
  return (spec.endpoints ?? []).map((ep, i) => ({ id: `${resourceKey(se)}#${i}`, spec: ep }));
}

/** WorkloadEntries of the service's namespace whose labels its selector matches (an empty selector selects none). */
function selectedWorkloadEntries(ps: PlatformService, sameNamespace: readonly ConfigResource<WorkloadEntrySpec>[]): ConfigResource<WorkloadEntrySpec>[] {
  if (!ps.selector || Object.keys(ps.selector).length === 0) return [];
  return sameNamespace.filter((we) => labelsMatch(ps.selector, { ...we.metadata.labels, ...(we.spec.labels ?? {}) }));
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
  for (const port of ps.service.ports) {
    const list = [...(own.get(port.number) ?? [])];
    const target = ps.targetPorts.get(port.number);
    for (const we of selected) {
      const ports = we.spec.ports ?? {};
      const number = ports[port.name] ?? (typeof target === 'number' ? target : target !== undefined ? ports[target] : undefined) ?? port.number;
      list.push({
        hostname: ps.service.hostname,
        servicePort: port,
        address: we.spec.address ?? '',
        port: number,
        labels: { ...we.metadata.labels, ...(we.spec.labels ?? {}) },
        weight: we.spec.weight && we.spec.weight > 0 ? we.spec.weight : 1,
        locality: we.spec.locality ?? '',
        serviceAccount: we.spec.serviceAccount ?? 'default',
        namespace: ps.service.namespace,
        network: networkOf({ ...we.spec, labels: { ...we.metadata.labels, ...(we.spec.labels ?? {}) } }),
        workload: resourceKey(we),
      });
    }
    list.sort((a, b) => a.address.localeCompare(b.address) || a.port - b.port);
    out.set(port.number, list);
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
