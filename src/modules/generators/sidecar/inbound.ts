/** The proxy's own service ports (its "service instances"), for inbound clusters and listeners. */
import { Proxy } from '../../model/proxy';
import { PushContext } from '../../model/push-context';
import { Service, ServiceEndpoint } from '../../registry/model';

export interface InboundInstance {
  endpoint: ServiceEndpoint;
  service: Service;
}

/**
 * One instance per (workload address, service port number), services in host order (the
 * first host wins a port two services share), sorted by address then port.
 */
export function inboundInstances(push: PushContext, proxy: Proxy): InboundInstance[] {
  const seen = new Set<string>();
  const out: InboundInstance[] = [];
  const sorted = [...push.serviceInstancesOf(proxy)].sort(
    (a, b) => cmp(a.hostname, b.hostname) || a.servicePort.number - b.servicePort.number || cmp(a.address, b.address),
  );
  for (const endpoint of sorted) {
    const service = push.service(endpoint.hostname);
    if (!service) continue;
    const id = `${endpoint.address}|${endpoint.servicePort.number}`;
    if (seen.has(id)) continue;
    seen.add(id);
    out.push({ endpoint, service });
  }
  return out.sort((a, b) => cmp(a.endpoint.address, b.endpoint.address) || a.endpoint.servicePort.number - b.endpoint.servicePort.number);
}

/** Instances with distinct service port numbers (one inbound cluster per port). */
export function inboundPorts(push: PushContext, proxy: Proxy): InboundInstance[] {
  const seen = new Set<number>();
  const byHost = [...inboundInstances(push, proxy)].sort(
    (a, b) => cmp(a.service.hostname, b.service.hostname) || a.endpoint.servicePort.number - b.endpoint.servicePort.number,
  );
  return byHost
    .filter((i) => !seen.has(i.endpoint.servicePort.number) && seen.add(i.endpoint.servicePort.number))
    .sort((a, b) => a.endpoint.servicePort.number - b.endpoint.servicePort.number);
}

/**
 * What a proxy's inbound config is built from besides its key (addresses, namespace, labels),
 * as xDS cache tags: the services it is an instance of (`host:`), the endpoints at its
 * addresses (`address:`, a workload joining or leaving them), and the policy kinds inbound
 * chains and their contributors read. Kinds the cache does not track clear it entirely, and
 * so does a mesh config change. Kept across pushes, a push that touches none of these does
 * not rebuild the inbound side of every proxy.
 */
export function inboundDependencies(push: PushContext, proxy: Proxy): string[] {
  const hosts = new Set(push.serviceInstancesOf(proxy).map((e) => `host:${e.hostname}`));
  return [...proxy.ips.map((ip) => `address:${ip}`), ...hosts, ...INBOUND_KINDS];
}

const INBOUND_KINDS = ['kind:PeerAuthentication', 'kind:AuthorizationPolicy', 'kind:RequestAuthentication', 'kind:DestinationRule', 'kind:VirtualService'];

/**
 * Memo key of a proxy's inbound side: its namespace, labels and instances (service, service
 * port, workload port, in the order they are built in), so the replicas of a workload share
 * one inbound side; with `addressed`, its addresses too (listeners without capture are named
 * after and bound to them).
 */
export function inboundKey(push: PushContext, proxy: Proxy, addressed: boolean): string {
  // Listeners and clusters both ask, on every push: worked out once per push and proxy.
  return push.memoizeFor(proxy, addressed ? 'inbound-key/addressed' : 'inbound-key', () => buildInboundKey(push, proxy, addressed));
}

function buildInboundKey(push: PushContext, proxy: Proxy, addressed: boolean): string {
  const labels = JSON.stringify(Object.keys(proxy.labels).sort().map((k) => [k, proxy.labels[k]]));
  const instances = inboundInstances(push, proxy).map((i) => [i.service.hostname, i.endpoint.port, i.endpoint.servicePort]);
  return `${addressed ? proxy.ips.join(',') : '*'}|${proxy.namespace}|${labels}|${JSON.stringify(instances)}`;
}

function cmp(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
