/**
 * Orchestrator objects into the registry model, as the incumbent maps them: a Service becomes
 * the service `<name>.<namespace>.svc.<domain>`, the endpoints of its EndpointSlices become its
 * endpoints, with the labels and service account of their pods, the locality of their nodes,
 * and the network and cluster they run in.
 */
import type { V1Endpoint, V1EndpointSlice, V1Node, V1Pod, V1Service } from '@kubernetes/client-node';
import { Service, ServiceEndpoint, ServicePort } from '../model';
import { PlatformService } from '../platform';
import { portProtocol } from './ports';

/** The mesh's labels and annotations on orchestrator objects. */
export const EXPORT_TO_ANNOTATION = 'networking.mesh.io/exportTo';
export const NETWORK_LABEL = 'topology.mesh.io/network';
export const CLUSTER_LABEL = 'topology.mesh.io/cluster';
export const SUBZONE_LABEL = 'topology.mesh.io/subzone';
export const REGION_LABEL = 'topology.kubernetes.io/region';
export const ZONE_LABEL = 'topology.kubernetes.io/zone';
/** The label of an EndpointSlice naming its Service. */
export const SERVICE_NAME_LABEL = 'kubernetes.io/service-name';

export interface ConvertOptions {
  /** `--domain`. */
  domain: string;
  /** `--clusterID`: the cluster label of every endpoint. */
  clusterId: string;
  /** PILOT_SEND_UNHEALTHY_ENDPOINTS: not-ready endpoints are sent, as UNHEALTHY. */
  sendUnhealthyEndpoints: boolean;
  /** PILOT_PERSISTENT_SESSION_LABEL: services with it keep terminating endpoints, as DRAINING. */
  persistentSessionLabel: string;
}

export function serviceHost(name: string, namespace: string, domain: string): string {
  return `${name}.${namespace}.svc.${domain}`;
}

/** The Service as the registry's service, with its selector and target ports for WorkloadEntry selection. */
export function toPlatformService(svc: V1Service, options: ConvertOptions): PlatformService {
  const namespace = svc.metadata?.namespace ?? 'default';
  const name = svc.metadata?.name ?? '';
  const spec = svc.spec ?? {};
  const external = spec.type === 'ExternalName';
  const targetPorts = new Map<number, number | string>();
  const ports: ServicePort[] = [];
  for (const p of spec.ports ?? []) {
    if (!Number.isInteger(p.port)) continue;
    const target = p.targetPort as unknown;
    const numeric = typeof target === 'number' ? target : typeof target === 'string' && /^\d+$/.test(target) ? Number(target) : undefined;
    ports.push({ name: p.name ?? '', number: p.port, protocol: portProtocol(p), targetPort: numeric ?? p.port });
    targetPorts.set(p.port, numeric ?? (typeof target === 'string' && target ? target : p.port));
  }
  ports.sort((a, b) => a.number - b.number);
  const ips = (spec.clusterIPs?.length ? spec.clusterIPs : spec.clusterIP ? [spec.clusterIP] : []).filter((ip) => ip && ip !== 'None');
  const headless = spec.clusterIP === 'None';
  const exportTo = (svc.metadata?.annotations?.[EXPORT_TO_ANNOTATION] ?? '')
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
  const service: Service = {
    hostname: serviceHost(name, namespace, options.domain),
    namespace,
    ports,
    // ExternalName: the proxy resolves the external name; headless: straight to the pod addresses.
    resolution: external ? 'DNS' : headless ? 'NONE' : 'STATIC',
    location: external ? 'MESH_EXTERNAL' : 'MESH_INTERNAL',
    addresses: external ? [] : ips,
    exportTo: exportTo.length ? exportTo : ['*'],
    source: `Service/${namespace}/${name}`,
  };
  const selector = spec.selector && Object.keys(spec.selector).length > 0 && !external ? { ...spec.selector } : undefined;
  return selector ? { service, selector, targetPorts } : { service, targetPorts };
}

/** Counts of one service's endpoints for the registry's gauges. */
export interface EndpointCounts {
  /** Not ready (pilot_endpoint_not_ready), whether sent or not. */
  notReady: number;
  /** Without a pod behind them (endpoint_no_pod); served without labels or service account. */
  noPod: number;
  /** Whose pod is not in the cache yet (pilot_k8s_endpoints_pending_pod); held back until it is. */
  pendingPod: number;
}

/** What endpoint building looks up: pods by reference or address, nodes by name, the cluster's network. */
export interface EndpointLookups {
  pod(namespace: string, name: string): V1Pod | undefined;
  podByIp(ip: string): V1Pod | undefined;
  node(name: string): V1Node | undefined;
  /** The network of the cluster (the system namespace's network label); '' when none. */
  defaultNetwork: string;
}

type Health = 'HEALTHY' | 'UNHEALTHY' | 'DRAINING' | 'TERMINATING';

/**
 * The incumbent's health of an EndpointSlice endpoint: ready (or unknown) is healthy; a
 * terminating one is draining for a persistent-session service (while still serving) and
 * otherwise dropped; anything else not ready is unhealthy.
 */
function healthOf(ep: V1Endpoint, persistentSessions: boolean): Health {
  const c = ep.conditions ?? {};
  if (c.ready === undefined || c.ready === null || c.ready) return 'HEALTHY';
  const terminating = c.terminating === undefined || c.terminating === null || c.terminating;
  const serving = c.serving === undefined || c.serving === null || c.serving;
  if (persistentSessions && serving && terminating) return 'DRAINING';
  if (terminating) return 'TERMINATING';
  return 'UNHEALTHY';
}

/** The service's endpoints by port from its EndpointSlices, and the counts the gauges need. */
export function endpointsOf(
  ps: PlatformService,
  svc: V1Service,
  slices: readonly V1EndpointSlice[],
  lookups: EndpointLookups,
  options: ConvertOptions,
): { endpoints: Map<number, ServiceEndpoint[]>; counts: EndpointCounts } {
  const service = ps.service;
  const counts: EndpointCounts = { notReady: 0, noPod: 0, pendingPod: 0 };
  const byPort = new Map<number, Map<string, ServiceEndpoint>>();
  for (const port of service.ports) byPort.set(port.number, new Map());
  if (svc.spec?.type === 'ExternalName') {
    const target = svc.spec.externalName ?? '';
    for (const port of service.ports) {
      if (!target) continue;
      byPort.get(port.number)!.set(`${target}:${port.number}`, {
        hostname: service.hostname, servicePort: port, address: target, port: port.number, labels: {}, weight: 1, locality: '',
        serviceAccount: '', namespace: service.namespace, network: '', workload: service.source,
      });
    }
    return { endpoints: sortedLists(byPort), counts };
  }
  const persistent = options.persistentSessionLabel !== '' && (svc.metadata?.labels?.[options.persistentSessionLabel] ?? '') !== '';
  // Slices in name order: an address in two slices (moving between them) is taken from the last, deterministically.
  const ordered = [...slices].sort((a, b) => compare(a.metadata?.name ?? '', b.metadata?.name ?? ''));
  for (const slice of ordered) {
    // FQDN slices are not supported by the incumbent either.
    if (slice.addressType === 'FQDN') continue;
    const slicePorts = slice.ports ?? [];
    for (const ep of slice.endpoints ?? []) {
      const health = healthOf(ep, persistent);
      if (health === 'TERMINATING' || health === 'UNHEALTHY') counts.notReady += ep.addresses?.length ?? 0;
      if (health === 'TERMINATING' || (health === 'UNHEALTHY' && !options.sendUnhealthyEndpoints)) continue;
      for (const address of ep.addresses ?? []) {
        const ref = ep.targetRef;
        const byRef = ref?.kind === 'Pod' && ref.name ? lookups.pod(ref.namespace || service.namespace, ref.name) : undefined;
        if (ref?.kind === 'Pod' && !byRef) {
          // The pod is not in our cache yet: its labels and identity are unknown, so wait for it.
          counts.pendingPod++;
          continue;
        }
        const pod = byRef ?? (ref ? undefined : lookups.podByIp(address));
        if (!pod) counts.noPod++;
        const nodeName = pod?.spec?.nodeName ?? ep.nodeName ?? '';
        const node = nodeName ? lookups.node(nodeName) : undefined;
        const locality = localityOf(node);
        const network = pod?.metadata?.labels?.[NETWORK_LABEL] || lookups.defaultNetwork;
        const labels = endpointLabels(pod?.metadata?.labels ?? {}, locality, network, options.clusterId, node);
        const workload = pod ? `Pod/${pod.metadata?.namespace}/${pod.metadata?.name}` : `EndpointSlice/${slice.metadata?.namespace}/${slice.metadata?.name}`;
        for (const sp of slicePorts) {
          const port = service.ports.find((p) => p.name === (sp.name ?? ''));
          if (!port || !Number.isInteger(sp.port)) continue;
          const endpoint: ServiceEndpoint = {
            hostname: service.hostname,
            servicePort: port,
            address,
            port: sp.port!,
            labels,
            weight: 1,
            locality,
            serviceAccount: pod ? pod.spec?.serviceAccountName || 'default' : '',
            namespace: service.namespace,
            network,
            workload,
            ...(health === 'UNHEALTHY' || health === 'DRAINING' ? { health } : {}),
          };
          byPort.get(port.number)!.set(`${address}:${sp.port}`, endpoint);
        }
      }
    }
  }
  return { endpoints: sortedLists(byPort), counts };
}

/** `region/zone/subzone` from the node's labels, without trailing empty parts. */
export function localityOf(node: V1Node | undefined): string {
  const labels = node?.metadata?.labels ?? {};
  const parts = [labels[REGION_LABEL] ?? '', labels[ZONE_LABEL] ?? '', labels[SUBZONE_LABEL] ?? ''];
  while (parts.length && parts[parts.length - 1] === '') parts.pop();
  return parts.join('/');
}

/** The pod's labels plus the topology labels the incumbent adds (cluster, network, locality). */
function endpointLabels(podLabels: Record<string, string>, locality: string, network: string, clusterId: string, node: V1Node | undefined): Record<string, string> {
  const labels: Record<string, string> = { ...podLabels, [CLUSTER_LABEL]: clusterId };
  if (network) labels[NETWORK_LABEL] = network;
  const nodeLabels = node?.metadata?.labels ?? {};
  if (locality) {
    for (const key of [REGION_LABEL, ZONE_LABEL, SUBZONE_LABEL]) if (nodeLabels[key]) labels[key] = nodeLabels[key];
  }
  return labels;
}

function sortedLists(byPort: Map<number, Map<string, ServiceEndpoint>>): Map<number, ServiceEndpoint[]> {
  const out = new Map<number, ServiceEndpoint[]>();
  for (const [port, eps] of byPort) out.set(port, [...eps.values()].sort((a, b) => compare(a.address, b.address) || a.port - b.port));
  return out;
}

function compare(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
