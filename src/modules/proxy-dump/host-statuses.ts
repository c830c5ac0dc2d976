import { alignColumns, TABLE_GAP } from './columns';
import { list, obj, str } from './dump';
import { EdsFilter } from './eds';
import { toProtoJson } from './proto-json';

/**
 * The proxy's `/clusters?format=json` answer (`cluster_statuses`), which `proxy-config
 * endpoint` reads in the reference: the endpoints as the proxy sees them, with health checks.
 */
export interface HostRow {
  address: string;
  port?: number;
  status: string;
  outlier: string;
  cluster: string;
}

export function isClustersStatus(data: unknown): boolean {
  return Array.isArray(obj(data).cluster_statuses);
}

function hostRows(data: unknown, f: EdsFilter): HostRow[] {
  const rows: HostRow[] = [];
  for (const cluster of list(obj(data).cluster_statuses).map(obj)) {
    for (const host of list(cluster.host_statuses).map(obj)) {
      const addr = obj(host.address);
      const sock = obj(addr.socket_address);
      const port = typeof sock.port_value === 'number' ? sock.port_value : undefined;
      const health = obj(host.health_status);
      const row = {
        address: addr.pipe !== undefined ? str(obj(addr.pipe).path) : str(sock.address),
        port,
        status: str(health.eds_health_status) || 'HEALTHY',
        outlier: health.failed_outlier_check === true ? 'FAILED' : 'OK',
        cluster: str(cluster.name),
      };
      if (f.address && row.address !== f.address) continue;
      if (f.port && row.port !== f.port) continue;
      if (f.cluster && row.cluster !== f.cluster) continue;
      if (f.status && row.status !== f.status) continue;
      rows.push(row);
    }
  }
  return rows.sort((a, b) => (a.cluster < b.cluster ? -1 : a.cluster > b.cluster ? 1 : a.address < b.address ? -1 : a.address > b.address ? 1 : (a.port ?? 0) - (b.port ?? 0)));
}

export function hostStatusesData(data: unknown, f: EdsFilter): unknown {
  const keep = new Set(hostRows(data, f).map((r) => r.cluster));
  return toProtoJson(list(obj(data).cluster_statuses).filter((c) => keep.has(str(obj(c).name))));
}

/** ENDPOINT, STATUS, OUTLIER CHECK, CLUSTER. */
export function hostStatusesTable(data: unknown, f: EdsFilter): string {
  const rows = hostRows(data, f).map((r) => [r.port === undefined ? r.address : `${r.address}:${r.port}`, r.status, r.outlier, r.cluster]);
  return alignColumns([['ENDPOINT', 'STATUS', 'OUTLIER CHECK', 'CLUSTER'], ...rows], TABLE_GAP);
}
