import { alignColumns } from '../proxy-dump';
import { byKeys, equalFold } from './compare';
import { Workload, ZtunnelDump } from './dump';
import { waypointName } from './waypoints';

/** `ztunnel-config workload` filters; empty ones match everything. */
export interface WorkloadFilter {
  /** One of the workload's IP addresses. */
  address?: string;
  namespace?: string;
  node?: string;
}

function matches(w: Workload, filter: WorkloadFilter): boolean {
  if (filter.namespace && !equalFold(w.namespace, filter.namespace)) return false;
  if (filter.address && !w.workloadIps.some((ip) => equalFold(ip, filter.address as string))) return false;
  if (filter.node && !equalFold(w.node, filter.node)) return false;
  return true;
}

/** The filtered workloads, by `<namespace>.<name>`, then node. */
function selected(dump: ZtunnelDump, filter: WorkloadFilter): Workload[] {
  return dump.workloads.filter((w) => matches(w, filter)).sort(byKeys((w) => [`${w.namespace}.${w.name}`, w.node]));
}

/** NAMESPACE, POD NAME, ADDRESS (its IPs, else its hostname), NODE, WAYPOINT, PROTOCOL. */
export function workloadsTable(dump: ZtunnelDump, filter: WorkloadFilter = {}): string {
  const rows = selected(dump, filter).map((w) => [
    w.namespace,
    w.name,
    w.workloadIps.length ? w.workloadIps.join(',') : w.hostname,
    w.node,
    waypointName(w.waypoint, dump.services),
    w.protocol,
  ]);
  return alignColumns([['NAMESPACE', 'POD NAME', 'ADDRESS', 'NODE', 'WAYPOINT', 'PROTOCOL'], ...rows], 1);
}

export function workloadsData(dump: ZtunnelDump, filter: WorkloadFilter = {}): unknown[] {
  return selected(dump, filter).map((w) => w.raw);
}
