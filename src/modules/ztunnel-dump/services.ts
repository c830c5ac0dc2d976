import { alignColumns } from '../proxy-dump';
import { byKeys, equalFold } from './compare';
import { Service, ZtunnelDump } from './dump';
import { waypointName } from './waypoints';

/** The filtered services, by namespace, name, then hostname. */
function selected(dump: ZtunnelDump, namespace?: string): Service[] {
  return dump.services.filter((s) => !namespace || equalFold(s.namespace, namespace)).sort(byKeys((s) => [s.namespace, s.name, s.hostname]));
}

/**
 * NAMESPACE, SERVICE NAME, SERVICE VIP (addresses without their network), WAYPOINT, and
 * ENDPOINTS as `<healthy>/<all>`: an endpoint counts as healthy when its workload is known
 * and `Healthy`.
 */
export function servicesTable(dump: ZtunnelDump, namespace?: string): string {
  const byUid = new Map(dump.workloads.map((w) => [w.uid, w]));
  const rows = selected(dump, namespace).map((s) => {
    const healthy = s.endpointWorkloadUids.filter((uid) => byUid.get(uid)?.status === 'Healthy').length;
    const vips = s.vips.map((vip) => (vip.includes('/') ? vip.slice(vip.indexOf('/') + 1) : ''));
    return [s.namespace, s.name, vips.join(','), waypointName(s.waypoint, dump.services), `${healthy}/${s.endpointWorkloadUids.length}`];
  });
  return alignColumns([['NAMESPACE', 'SERVICE NAME', 'SERVICE VIP', 'WAYPOINT', 'ENDPOINTS'], ...rows], 1);
}

export function servicesData(dump: ZtunnelDump, namespace?: string): unknown[] {
  return selected(dump, namespace).map((s) => s.raw);
}
