import { ChangeSet } from '../model/generator';
import { parseClusterName } from '../model/naming';
import { answersWithEndpoints, wantsNameTable } from '../model/nds-eligibility';
import { Proxy } from '../model/proxy';
import { PushContext } from '../model/push-context';
import { PUSH_ORDER, TypeUrl, XdsTypeUrl } from '../envoy/type-urls';

/**
 * For one proxy and one change: the types to regenerate, each for all its names, only some, or
 * only the resources of some hosts (a delta CDS push after service definitions changed).
 */
export type PushPlan = Map<XdsTypeUrl, 'all' | ReadonlySet<string> | HostScope>;

/** Only the resources that belong to these hosts can differ; the rest is not visited. */
export interface HostScope {
  readonly hosts: ReadonlySet<string>;
}

const ROUTING_KINDS = ['VirtualService', 'DestinationRule', 'Sidecar', 'Gateway', 'ServiceEntry'];

/**
 * Decides what a change means for a proxy, so only what changed is pushed to whom it
 * concerns: an endpoint change is an EDS push of the clusters of those hosts; a
 * VirtualService change is LDS/RDS; a policy change is LDS; anything else is a full push.
 * The name table (NDS) goes only to proxies that asked for one, when services move.
 *
 * When only service definitions changed, a delta proxy's clusters are regenerated and compared
 * for those hosts alone (a cluster reads its own service, DestinationRule, endpoints and the
 * PeerAuthentications, never another service), unless the proxy is an instance of one of them
 * (its inbound clusters follow its services). A state-of-the-world CDS response lists every
 * cluster anyway.
 */
export function planPush(
  change: ChangeSet, proxy: Proxy, push: PushContext, watchedEds: ReadonlySet<string> | undefined, protocol: 'sotw' | 'delta' = 'sotw',
): PushPlan {
  const plan: PushPlan = new Map();
  const reading = readChange(change);
  const { kinds, full, edsHosts } = reading;
  if (full) {
    for (const t of PUSH_ORDER) if (t !== TypeUrl.NameTable || wantsNameTable(proxy)) plan.set(t, 'all');
    return plan;
  }
  if (wantsNameTable(proxy) && nameTableMoved(change, kinds, push)) plan.set(TypeUrl.NameTable, 'all');
  if (kinds.has('Sidecar') || kinds.has('Gateway') || kinds.has('DestinationRule')) {
    plan.set(TypeUrl.Cluster, 'all');
    plan.set(TypeUrl.Listener, 'all');
    plan.set(TypeUrl.RouteConfiguration, 'all');
  } else if (change.services.size > 0) {
    const ownServiceChanged = push.serviceInstancesOf(proxy).some((e) => change.services.has(e.hostname));
    plan.set(TypeUrl.Cluster, protocol === 'delta' && proxy.generator === '' && !ownServiceChanged ? { hosts: change.services } : 'all');
    plan.set(TypeUrl.Listener, 'all');
    plan.set(TypeUrl.RouteConfiguration, 'all');
  }
  if (kinds.has('VirtualService')) {
    plan.set(TypeUrl.Listener, 'all');
    plan.set(TypeUrl.RouteConfiguration, 'all');
  }
  if (reading.policy) plan.set(TypeUrl.Listener, 'all');
  // Clients choose mTLS toward a destination from its PeerAuthentication (auto mTLS).
  if (kinds.has('PeerAuthentication')) plan.set(TypeUrl.Cluster, 'all');

  if (kinds.has('DestinationRule') || kinds.has('Sidecar')) {
    // Subset membership may have moved: refresh every watched cluster.
    plan.set(TypeUrl.ClusterLoadAssignment, 'all');
  } else if (edsHosts.size > 0 && watchedEds) {
    const names = edsNamesOf(reading, watchedEds);
    if (names.size > 0) plan.set(TypeUrl.ClusterLoadAssignment, names);
  }
  if (change.endpoints.size > 0) {
    // Clusters of DNS services carry their endpoints inline, and a proxy's own inbound
    // listeners and clusters (a gRPC server's listeners) follow its service instances.
    const ownInstancesMoved = proxy.ips.some((ip) => change.workloadAddresses.has(ip));
    if (ownInstancesMoved) plan.set(TypeUrl.Listener, 'all');
    if (proxy.generator !== 'grpc') {
      const inline = inlineHostsOf(reading, change, push);
      const clusters = plan.get(TypeUrl.Cluster);
      const hostScoped = protocol === 'delta' && proxy.generator === '' && (clusters === undefined || isHostScope(clusters));
      if (ownInstancesMoved || (inline.length > 0 && !hostScoped)) plan.set(TypeUrl.Cluster, 'all');
      else if (inline.length > 0) plan.set(TypeUrl.Cluster, { hosts: new Set([...(clusters ? (clusters as HostScope).hosts : []), ...inline]) });
    }
  }
  return plan;
}

const POLICY_KINDS = ['RequestAuthentication', 'AuthorizationPolicy', 'PeerAuthentication'];

/**
 * What every proxy's plan reads of a change, worked out once per change (one is planned for
 * thousands of proxies), and what follows from it for the proxies sharing a subscription.
 */
interface ChangeReading {
  kinds: ReadonlySet<string>;
  /** Everything is pushed: a full change, or a kind whose effect is not narrowed down. */
  full: boolean;
  /** A policy kind changed: every proxy's listeners. */
  policy: boolean;
  /** Hosts whose load assignments can differ. */
  edsHosts: ReadonlySet<string>;
  /**
   * The load assignments to push, per EDS subscription (subscriptions are shared and never
   * edited in place): proxies with the same subscription get the same Set, read only.
   */
  edsNames: WeakMap<ReadonlySet<string>, ReadonlySet<string>>;
  /** Changed endpoint hosts whose clusters carry their endpoints inline (not EDS), in the push they were read from. */
  inline?: { push: PushContext; hosts: readonly string[] };
}

const readings = new WeakMap<ChangeSet, ChangeReading>();

function readChange(change: ChangeSet): ChangeReading {
  let reading = readings.get(change);
  if (!reading) {
    const kinds = new Set([...change.configs].map((k) => k.split('/')[0]));
    const full = change.full || [...kinds].some((k) => !ROUTING_KINDS.includes(k) && !POLICY_KINDS.includes(k) && k !== 'WorkloadEntry');
    const policy = [...kinds].some((k) => POLICY_KINDS.includes(k));
    reading = { kinds, full, policy, edsHosts: new Set([...change.endpoints, ...change.services]), edsNames: new WeakMap() };
    readings.set(change, reading);
  }
  return reading;
}

/** The watched load assignments of the hosts whose endpoints can differ, once per subscription. */
function edsNamesOf(reading: ChangeReading, watched: ReadonlySet<string>): ReadonlySet<string> {
  let names = reading.edsNames.get(watched);
  if (!names) {
    const byHost = clustersByHost(watched);
    const found = new Set<string>();
    for (const host of reading.edsHosts) for (const name of byHost.get(host) ?? []) found.add(name);
    reading.edsNames.set(watched, (names = found));
  }
  return names;
}

/** Changed endpoint hosts whose services are not resolved by EDS (their clusters list the endpoints), once per push. */
function inlineHostsOf(reading: ChangeReading, change: ChangeSet, push: PushContext): readonly string[] {
  if (reading.inline?.push !== push) reading.inline = { push, hosts: [...change.endpoints].filter((h) => push.service(h)?.resolution !== 'STATIC') };
  return reading.inline.hosts;
}

export function isHostScope(scope: 'all' | ReadonlySet<string> | HostScope): scope is HostScope {
  return scope !== 'all' && !(scope instanceof Set);
}

/** The name table lists the services in scope and, for those without a VIP, their endpoints. */
function nameTableMoved(change: ChangeSet, kinds: ReadonlySet<string>, push: PushContext): boolean {
  if (kinds.has('Sidecar') || change.services.size > 0) return true;
  return [...change.endpoints].some((host) => {
    const service = push.service(host);
    return service !== undefined && answersWithEndpoints(service);
  });
}

/**
 * Watched cluster names by host, built once per subscription set (subscriptions are
 * replaced, never mutated, when they change), so an endpoint push does not parse every
 * name every proxy watches.
 */
const indexes = new WeakMap<ReadonlySet<string>, Map<string, string[]>>();

function clustersByHost(names: ReadonlySet<string>): Map<string, string[]> {
  let index = indexes.get(names);
  if (!index) {
    index = new Map();
    for (const name of names) {
      const host = parseClusterName(name)?.host;
      if (!host) continue;
      const list = index.get(host);
      if (list) list.push(name);
      else index.set(host, [name]);
    }
    indexes.set(names, index);
  }
  return index;
}

/** Merges two change sets (debouncing, or a proxy whose previous push is still queued). */
export function mergeChanges(a: ChangeSet, b: ChangeSet): ChangeSet {
  return {
    full: a.full || b.full,
    services: new Set([...a.services, ...b.services]),
    endpoints: new Set([...a.endpoints, ...b.endpoints]),
    configs: new Set([...a.configs, ...b.configs]),
    workloadAddresses: new Set([...a.workloadAddresses, ...b.workloadAddresses]),
  };
}

export const FULL_CHANGE: ChangeSet = { full: true, services: new Set(), endpoints: new Set(), configs: new Set(), workloadAddresses: new Set() };
