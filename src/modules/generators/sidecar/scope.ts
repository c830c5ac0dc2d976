/**
 * What a sidecar may reach, from the services visible to its namespace and the Sidecar
 * resource that applies to it: the services it gets clusters for and the outbound ports it
 * gets listeners and route tables for. Shared (memoized) by every proxy with the same
 * namespace and Sidecar resource.
 */
import { ConfigResource, resourceKey } from '../../config/resource';
import { EgressListener, SidecarSpec } from '../../config/kinds/sidecar';
import { DestinationRuleSpec } from '../../config/kinds/destination-rule';
import { VirtualServiceSpec } from '../../config/kinds/virtual-service';
import { Proxy } from '../../model/proxy';
import { hostMatches, PushContext } from '../../model/push-context';
import { isHttpProtocol, normalizeProtocol, Protocol, Service, ServicePort } from '../../registry/model';

/** One outbound port the sidecar listens on (or captures), with the services behind it. */
export interface OutboundPort {
  number: number;
  /** Address from a Sidecar egress listener (`bind`); unset = the mode's default. */
  bind?: string;
  /** The egress listener asked for no capture: a real listener even under REDIRECT/TPROXY. */
  captureNone: boolean;
  /** Services whose port `number` is carried over HTTP (sorted by host), with that port. */
  http: { service: Service; port: ServicePort }[];
  /** The other services on this port (sorted by host). */
  tcp: { service: Service; port: ServicePort }[];
}

export interface SidecarScope {
  /** Identity of the scope within a push, for memo keys. */
  key: string;
  sidecar?: ConfigResource<SidecarSpec>;
  /** Every service the proxy gets clusters for, sorted by host. */
  services: readonly Service[];
  ports: readonly OutboundPort[];
  outboundMode: 'ALLOW_ANY' | 'REGISTRY_ONLY';
}

/** The route table name of an outbound port: `<port>`, or `<bind>:<port>` for a Sidecar bind. */
export function routeNameOf(port: Pick<OutboundPort, 'number' | 'bind'>): string {
  return port.bind ? `${port.bind}:${port.number}` : String(port.number);
}

/** `[<bind>:]<port>` → its parts; undefined when it is not a route name of ours. */
export function parseRouteName(name: string): { bind?: string; number: number } | undefined {
  const colon = name.lastIndexOf(':');
  const portText = colon >= 0 ? name.slice(colon + 1) : name;
  if (!/^\d+$/.test(portText)) return undefined;
  const number = Number(portText);
  if (number < 1 || number > 65535) return undefined;
  return colon >= 0 ? { bind: name.slice(0, colon), number } : { number };
}

/** Does an egress host `ns/host` (`*`, `.`, `~` namespaces; `*`, `*.suffix` hosts) cover the service? */
export function egressHostMatches(entry: string, service: Service, proxyNamespace: string): boolean {
  const slash = entry.indexOf('/');
  const ns = slash >= 0 ? entry.slice(0, slash) : '*';
  const host = slash >= 0 ? entry.slice(slash + 1) : entry;
  if (ns === '~') return false;
  if (ns !== '*' && (ns === '.' ? proxyNamespace : ns) !== service.namespace) return false;
  return hostMatches(host, service.hostname);
}

/** The proxy's scope, found once per push (a push asks once per type and proxy). */
export function sidecarScope(push: PushContext, proxy: Proxy): SidecarScope {
  return push.memoizeFor(proxy, 'sidecar-scope', () => findScope(push, proxy));
}

function findScope(push: PushContext, proxy: Proxy): SidecarScope {
  const sidecar = push.sidecarFor(proxy);
  const key = `${proxy.namespace}|${sidecar ? resourceKey(sidecar) : ''}`;
  // Services and Sidecars only: an endpoint push keeps the previous push's scopes.
  return push.memoizeTopology(`sidecar-scope/${key}`, () => buildScope(push, proxy.namespace, key, sidecar));
}

/** A scope's services by host, once per scope (kept as long as the scope is, across endpoint pushes too). */
const hostsOfScopes = new WeakMap<SidecarScope, ReadonlyMap<string, Service>>();

export function scopeHosts(scope: SidecarScope): ReadonlyMap<string, Service> {
  let hosts = hostsOfScopes.get(scope);
  if (!hosts) hostsOfScopes.set(scope, (hosts = new Map(scope.services.map((s) => [s.hostname, s]))));
  return hosts;
}

const CATCH_ALL: EgressListener = { hosts: ['*/*'] };

function buildScope(push: PushContext, namespace: string, key: string, sidecar: ConfigResource<SidecarSpec> | undefined): SidecarScope {
  const visible = push.visibleServices(namespace);
  const egress = sidecar?.spec.egress?.length ? sidecar.spec.egress : [CATCH_ALL];
  const inScope = new Set<Service>();
  const ports: OutboundPort[] = [];
  const taken = new Set<string>();
  const specific = new Set(egress.filter((l) => l.port).map((l) => l.port!.number));

  // Port-specific listeners first, then the catch-all for the ports they leave.
  const ordered = [...egress.filter((l) => l.port), ...egress.filter((l) => !l.port)];
  for (const listener of ordered) {
    const services = visible.filter((s) => (listener.hosts ?? []).some((h) => egressHostMatches(h, s, namespace)));
    services.forEach((s) => inScope.add(s));
    const byPort = new Map<number, OutboundPort>();
    const captureNone = listener.captureMode === 'NONE';
    const bind = listener.bind || undefined;
    const add = (service: Service, port: ServicePort, protocol: Protocol) => {
      const id = `${bind ?? ''}|${port.number}`;
      if (taken.has(id) && !byPort.has(port.number)) return;
      let entry = byPort.get(port.number);
      if (!entry) {
        entry = { number: port.number, bind, captureNone, http: [], tcp: [] };
        byPort.set(port.number, entry);
        taken.add(id);
      }
      const p = protocol === port.protocol ? port : { ...port, protocol };
      (isHttpProtocol(protocol) ? entry.http : entry.tcp).push({ service, port: p });
    };
    for (const service of services) {
      for (const port of service.ports) {
        if (listener.port) {
          if (port.number !== listener.port.number) continue;
          add(service, port, listener.port.protocol ? normalizeProtocol(listener.port.protocol) : port.protocol);
        } else if (!specific.has(port.number)) {
          add(service, port, port.protocol);
        }
      }
    }
    if (listener.port && !byPort.has(listener.port.number) && !taken.has(`${bind ?? ''}|${listener.port.number}`)) {
      // A listener for a port no service uses still exists (traffic then passes through).
      byPort.set(listener.port.number, { number: listener.port.number, bind, captureNone, http: [], tcp: [] });
      taken.add(`${bind ?? ''}|${listener.port.number}`);
    }
    ports.push(...[...byPort.values()].sort((a, b) => a.number - b.number));
  }
  for (const p of ports) {
    p.http.sort((a, b) => a.service.hostname.localeCompare(b.service.hostname));
    p.tcp.sort((a, b) => a.service.hostname.localeCompare(b.service.hostname));
  }
  return {
    key,
    sidecar,
    services: [...inScope].sort((a, b) => (a.hostname < b.hostname ? -1 : a.hostname > b.hostname ? 1 : 0)),
    ports,
    // A Sidecar's policy wins; otherwise the mesh config's (ALLOW_ANY by default).
    outboundMode: sidecar?.spec.outboundTrafficPolicy?.mode ?? push.mesh.outboundTrafficPolicy.mode,
  };
}

/**
 * Whether any config makes generated output depend on a proxy's labels beyond its Sidecar
 * (DestinationRules with a workloadSelector, VirtualService matches on sourceLabels).
 */
export function labelSensitive(push: PushContext): boolean {
  return push.memoize('sidecar-label-sensitive', () => {
    if (push.resources<DestinationRuleSpec>('DestinationRule').some((dr) => dr.spec.workloadSelector)) return true;
    return push.resources<VirtualServiceSpec>('VirtualService').some((vs) =>
      [...(vs.spec.http ?? []), ...(vs.spec.tcp ?? [])].some((r) => (r.match ?? []).some((m) => m.sourceLabels && Object.keys(m.sourceLabels).length > 0)),
    );
  });
}

/** Memo key of config built for the proxy's scope: namespace, Sidecar, and labels when they matter. */
export function configKey(push: PushContext, proxy: Proxy, scope: SidecarScope): string {
  return labelSensitive(push) ? `${scope.key}|${labelsKey(proxy.labels)}` : scope.key;
}

export function labelsKey(labels: Readonly<Record<string, string>>): string {
  return JSON.stringify(Object.keys(labels).sort().map((k) => [k, labels[k]]));
}
