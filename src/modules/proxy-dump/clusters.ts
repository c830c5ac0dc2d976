import { alignColumns, TABLE_GAP } from './columns';
import { parseClusterName } from './cluster-name';
import { ConfigDump, list, obj, requireSection, str } from './dump';
import { toProtoJson } from './proto-json';

/** Filters of `proxy-config cluster`: FQDN and subset are substrings, direction exact. */
export interface ClusterFilter {
  fqdn?: string;
  port?: number;
  subset?: string;
  direction?: string;
}

const cmp = (a: string | number, b: string | number) => (a < b ? -1 : a > b ? 1 : 0);

/** Static and dynamic clusters that match, sorted by FQDN, direction, subset, port. */
function clusters(dump: ConfigDump, f: ClusterFilter): Record<string, unknown>[] {
  const section = requireSection(dump, 'ClustersConfigDump');
  const all = [...list(section.static_clusters), ...list(section.dynamic_active_clusters)].map((c) => obj(obj(c).cluster));
  return all
    .filter((c) => {
      const n = parseClusterName(str(c.name));
      if (f.fqdn && !n.fqdn.includes(f.fqdn)) return false;
      if (f.port && n.port !== f.port) return false;
      if (f.subset && !n.subset.includes(f.subset)) return false;
      if (f.direction && n.direction !== f.direction) return false;
      return true;
    })
    .sort((a, b) => {
      const x = parseClusterName(str(a.name));
      const y = parseClusterName(str(b.name));
      return cmp(x.fqdn, y.fqdn) || cmp(x.direction, y.direction) || cmp(x.subset, y.subset) || cmp(x.port ?? 0, y.port ?? 0);
    });
}

export function clustersData(dump: ConfigDump, f: ClusterFilter): unknown {
  return toProtoJson(clusters(dump, f).map(({ '@type': _t, ...rest }) => rest));
}

/** `<name>.<namespace>` of the destination rule a cluster came from, per its config metadata. */
function destinationRule(cluster: Record<string, unknown>): string {
  const config = str(obj(obj(obj(cluster.metadata).filter_metadata).mesh).config);
  const m = /\/namespaces\/([^/]+)\/destination-rule\/([^/]+)$/.exec(config);
  return m ? `${m[2]}.${m[1]}` : '';
}

function clusterType(cluster: Record<string, unknown>): string {
  if (cluster.cluster_type !== undefined) return str(obj(cluster.cluster_type).name);
  return str(cluster.type) || 'STATIC';
}

/** SERVICE FQDN, PORT, SUBSET, DIRECTION, TYPE, DESTINATION RULE; with `prefix` (in `all`) a NAME column first. */
export function clustersTable(dump: ConfigDump, f: ClusterFilter, prefix?: string): string {
  const rows = clusters(dump, f).map((c) => {
    const name = str(c.name);
    const n = parseClusterName(name);
    const parsed = n.port !== undefined;
    // Names that are not `direction|port|subset|fqdn` show as themselves, prefixed in `all`.
    const fqdn = parsed ? n.fqdn : (prefix ?? '') + name;
    const cells = [fqdn, parsed ? String(n.port) : '-', parsed ? n.subset || '-' : '-', parsed ? n.direction : '-', clusterType(c), destinationRule(c)];
    return prefix === undefined ? cells : [prefix + name, ...cells];
  });
  const header = ['SERVICE FQDN', 'PORT', 'SUBSET', 'DIRECTION', 'TYPE', 'DESTINATION RULE'];
  return alignColumns([prefix === undefined ? header : ['NAME', ...header], ...rows], TABLE_GAP);
}
