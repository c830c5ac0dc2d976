/** EDS: the ClusterLoadAssignment of an outbound cluster, endpoints grouped by locality. */
import { Proxy } from '../../model/proxy';
import { PushContext } from '../../model/push-context';
import { labelsMatch, Service, ServiceEndpoint, ServicePort } from '../../registry/model';
import { EndpointContributor } from '../../model/generator';
import { parseClusterName } from '../../model/naming';
import { EnvoyEnum } from './envoy-enums';
import { subsetOf } from './traffic-policy';

type Obj = Record<string, unknown>;

/** An endpoint address: `unix://` paths become pipes, anything else a socket address. */
export function endpointAddress(address: string, port: number): Obj {
  if (address.startsWith('unix://')) return { pipe: { path: address.slice('unix://'.length) } };
  return { socket_address: { address, port_value: port } };
}

/** The endpoint of a DNS service without endpoints: its own host name. */
export function dnsSelfEndpoint(service: Service, port: ServicePort): ServiceEndpoint {
  return {
    hostname: service.hostname, servicePort: port, address: service.hostname, port: port.targetPort, labels: {}, weight: 1, locality: '',
    serviceAccount: '', namespace: service.namespace, network: '', workload: '',
  };
}

/**
 * The ClusterLoadAssignment of an outbound cluster name: the service port's endpoints (for a
 * subset, those whose labels match the subset of the DestinationRule the proxy sees), grouped
 * by locality; each locality weighs the sum of its endpoints' weights. `undefined` when the
 * name is not an outbound cluster of a known service port and subset.
 */
export function buildLoadAssignment(push: PushContext, proxy: Proxy, clusterName: string, contributors?: readonly EndpointContributor[]): Obj | undefined {
  const parsed = parseClusterName(clusterName);
  if (!parsed || parsed.direction !== 'outbound') return undefined;
  const service = push.service(parsed.host);
  const port = service?.ports.find((p) => p.number === parsed.port);
  if (!service || !port) return undefined;
  let endpoints = push.endpoints(service.hostname, port.number);
  if (parsed.subset) {
    const { subset } = subsetOf(push, proxy, service.hostname, parsed.subset);
    if (!subset) return undefined;
    endpoints = endpoints.filter((ep) => labelsMatch(subset.labels, ep.labels));
  } else if (endpoints.length === 0 && (service.resolution === 'DNS' || service.resolution === 'DNS_ROUND_ROBIN')) {
    // As in the inline assignment of its cluster: a DNS service without endpoints is its own host name.
    endpoints = [dnsSelfEndpoint(service, port)];
  }
  return loadAssignmentOf(clusterName, endpoints, contributors);
}

/** Endpoints grouped by locality (sorted), each group weighted by the sum of its endpoint weights. */
export function loadAssignmentOf(clusterName: string, endpoints: readonly ServiceEndpoint[], contributors?: readonly EndpointContributor[]): Obj {
  const groups = new Map<string, { lbEndpoints: Obj[]; weight: number }>();
  for (const ep of endpoints) {
    // An endpoint without an address is reached through its network's gateway: not here.
    if (!ep.address) continue;
    const lbEndpoint: Obj = {
      endpoint: { address: endpointAddress(ep.address, ep.port) },
      health_status: EnvoyEnum.HealthStatus[ep.health ?? 'HEALTHY'],
      load_balancing_weight: { value: ep.weight },
    };
    for (const c of contributors ?? []) c.patchEndpoint(lbEndpoint, ep);
    const group = groups.get(ep.locality) ?? { lbEndpoints: [], weight: 0 };
    group.lbEndpoints.push(lbEndpoint);
    group.weight += ep.weight;
    groups.set(ep.locality, group);
  }
  const localities = [...groups.keys()].sort();
  return {
    cluster_name: clusterName,
    endpoints: localities.map((loc) => ({
      locality: localityOf(loc),
      lb_endpoints: groups.get(loc)!.lbEndpoints,
      load_balancing_weight: { value: groups.get(loc)!.weight },
    })),
  };
}

function localityOf(locality: string): Obj {
  const [region, zone, subZone] = locality.split('/');
  const out: Obj = {};
  if (region) out.region = region;
  if (zone) out.zone = zone;
  if (subZone) out.sub_zone = subZone;
  return out;
}
