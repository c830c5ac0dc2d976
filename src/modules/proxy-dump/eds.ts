import { alignColumns, TABLE_GAP } from './columns';
import { parseClusterName } from './cluster-name';
import { ConfigDump, list, obj, requireSection, str } from './dump';
import { toProtoJson } from './proto-json';

/** Filters of `proxy-config eds`; an unset one matches everything. */
export interface EdsFilter {
  address?: string;
  port?: number;
  cluster?: string;
  status?: string;
}

type Lb = Record<string, unknown>;

function endpointAddress(lb: Lb): { address: string; port?: number; text: string } {
  const addr = obj(obj(lb.endpoint).address);
  const pipe = obj(addr.pipe);
  if (pipe.path !== undefined) return { address: str(pipe.path), text: str(pipe.path) };
  const internal = obj(addr.envoy_internal_address);
  if (internal.server_listener_name !== undefined) {
    const text = `envoy://${str(internal.server_listener_name)}/${str(internal.endpoint_id)}`;
    return { address: text, text };
  }
  const sock = obj(addr.socket_address);
  const port = typeof sock.port_value === 'number' ? sock.port_value : undefined;
  return { address: str(sock.address), port, text: port === undefined ? str(sock.address) : `${str(sock.address)}:${port}` };
}

function matches(lb: Lb, clusterName: string, f: EdsFilter): boolean {
  const a = endpointAddress(lb);
  if (f.address && a.address !== f.address) return false;
  if (f.port && a.port !== f.port) return false;
  if (f.cluster && clusterName !== f.cluster) return false;
  if (f.status && str(lb.health_status) !== f.status) return false;
  return true;
}

/**
 * The dump's load assignments (static and dynamic) keeping only matching endpoints, dropping
 * those left empty; sorted by service FQDN then port, as the reference sorts them.
 */
function filteredAssignments(dump: ConfigDump, f: EdsFilter): Record<string, unknown>[] {
  const section = requireSection(dump, 'EndpointsConfigDump');
  const all = [...list(section.static_endpoint_configs), ...list(section.dynamic_endpoint_configs)].map((c) => obj(obj(c).endpoint_config));
  const kept = all.flatMap((cla) => {
    const name = str(cla.cluster_name);
    const endpoints = list(cla.endpoints)
      .map(obj)
      .map((locality) => ({ ...locality, lb_endpoints: list(locality.lb_endpoints).map(obj).filter((lb) => matches(lb, name, f)) }))
      .filter((locality) => locality.lb_endpoints.length > 0);
    if (endpoints.length === 0) return [];
    const { '@type': _type, ...rest } = cla;
    return [{ ...rest, endpoints }];
  });
  const key = (c: Record<string, unknown>) => parseClusterName(str(c.cluster_name));
  return kept.sort((a, b) => {
    const ka = key(a);
    const kb = key(b);
    return ka.fqdn < kb.fqdn ? -1 : ka.fqdn > kb.fqdn ? 1 : (ka.port ?? 0) - (kb.port ?? 0);
  });
}

export function edsData(dump: ConfigDump, f: EdsFilter): unknown {
  return toProtoJson(filteredAssignments(dump, f));
}

/** NAME, STATUS, LOCALITY, CLUSTER; `prefix` is `endpoint/` in `all`. */
export function edsTable(dump: ConfigDump, f: EdsFilter, prefix = ''): string {
  const rows: string[][] = [];
  for (const cla of filteredAssignments(dump, f)) {
    for (const locality of list(cla.endpoints).map(obj)) {
      const loc = obj(locality.locality);
      const where = [loc.region, loc.zone, loc.sub_zone].map(str).filter(Boolean).join('/');
      for (const lb of list(locality.lb_endpoints).map(obj)) {
        rows.push([prefix + endpointAddress(lb).text, str(lb.health_status), where, str(cla.cluster_name)]);
      }
    }
  }
  return alignColumns([['NAME', 'STATUS', 'LOCALITY', 'CLUSTER'], ...rows], TABLE_GAP);
}
