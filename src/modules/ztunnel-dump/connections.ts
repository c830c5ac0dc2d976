import { alignColumns } from '../proxy-dump';
import { byKeys } from './compare';
import { WorkloadState, ZtunnelDump } from './dump';

/** `ztunnel-config connections` filters. */
export interface ConnectionsFilter {
  /** Only the connections of workloads in this namespace (exact). */
  namespace?: string;
  direction?: 'inbound' | 'outbound';
  /** Addresses as they are, instead of service or workload names. */
  raw?: boolean;
}

function selected(dump: ZtunnelDump, namespace?: string): WorkloadState[] {
  return dump.workloadStates.filter((s) => !namespace || s.namespace === namespace).sort(byKeys((s) => [s.namespace, s.name]));
}

/** `host:port` split as Go's net.SplitHostPort does for the addresses ztunnel writes; undefined when it is not one. */
function splitHostPort(address: string): { host: string; port: string } | undefined {
  const bracketed = /^\[([^\]]*)\]:([^:]*)$/.exec(address);
  if (bracketed) return { host: bracketed[1], port: bracketed[2] };
  const colon = address.lastIndexOf(':');
  if (colon < 0 || address.indexOf(':') !== colon || address.includes('[') || address.includes(']')) return undefined;
  return { host: address.slice(0, colon), port: address.slice(colon + 1) };
}

const joinHostPort = (host: string, port: string): string => (host.includes(':') ? `[${host}]:${port}` : `${host}:${port}`);

/**
 * Names for addresses: a service's hostname for its first VIP, a workload's `<name>.<namespace>`
 * for its first IP (services win). Entries without an address are keyed `None`, which no
 * connection address is.
 */
function addressNamer(dump: ZtunnelDump, raw: boolean): (address: string) => string {
  if (raw) return (address) => address;
  const services = new Map<string, string>();
  for (const s of dump.services) {
    const first = s.vips[0] ?? '';
    const ip = first.includes('/') ? first.slice(first.indexOf('/') + 1) : '';
    services.set(ip || 'None', s.hostname);
  }
  const workloads = new Map<string, string>();
  for (const w of dump.workloads) workloads.set(w.workloadIps[0] || 'None', `${w.name}.${w.namespace}`);
  return (address) => {
    const split = splitHostPort(address);
    if (!split) return address;
    const name = services.get(split.host) ?? workloads.get(split.host);
    return name === undefined ? address : joinHostPort(name, split.port);
  };
}

/**
 * WORKLOAD, DIRECTION, LOCAL, REMOTE, REMOTE TARGET, PROTOCOL: the connections ztunnel proxies
 * for each of its workloads (by namespace, then name), inbound before outbound. Addresses are
 * shown as service or workload names unless `raw`; an inbound connection's target is shown as
 * ztunnel wrote it.
 */
export function connectionsTable(dump: ZtunnelDump, filter: ConnectionsFilter = {}): string {
  const name = addressNamer(dump, filter.raw === true);
  const rows: string[][] = [];
  for (const s of selected(dump, filter.namespace)) {
    const workload = `${s.name}.${s.namespace}`;
    if (filter.direction !== 'outbound') for (const c of s.inbound) rows.push([workload, 'Inbound', name(c.actualDst), name(c.src), c.originalDst, c.protocol]);
    if (filter.direction !== 'inbound') for (const c of s.outbound) rows.push([workload, 'Outbound', name(c.src), name(c.actualDst), name(c.originalDst), c.protocol]);
  }
  return alignColumns([['WORKLOAD', 'DIRECTION', 'LOCAL', 'REMOTE', 'REMOTE TARGET', 'PROTOCOL'], ...rows], 1);
}

/**
 * The workloads' states (info and connections) as ztunnel wrote them, filtered by namespace;
 * with a direction, the other direction's connections are left out.
 */
export function connectionsData(dump: ZtunnelDump, filter: ConnectionsFilter = {}): unknown[] {
  const other = filter.direction === 'inbound' ? 'outbound' : filter.direction === 'outbound' ? 'inbound' : undefined;
  return selected(dump, filter.namespace).map((s) => {
    const connections = s.raw.connections;
    if (!other || typeof connections !== 'object' || connections === null) return s.raw;
    const { [other]: _left, ...kept } = connections as Record<string, unknown>;
    return { ...s.raw, connections: kept };
  });
}
