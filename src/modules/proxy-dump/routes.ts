import { alignColumns, TABLE_GAP } from './columns';
import { ConfigDump, list, obj, requireSection, str } from './dump';
import { toProtoJson } from './proto-json';

/** Dynamic route configurations first, then static ones, each in dump order. */
function routeConfigs(dump: ConfigDump, name?: string): Record<string, unknown>[] {
  const section = requireSection(dump, 'RoutesConfigDump');
  const configs = [...list(section.dynamic_route_configs), ...list(section.static_route_configs)].map((c) => obj(obj(c).route_config));
  return name ? configs.filter((c) => str(c.name) === name) : configs;
}

export function routesData(dump: ConfigDump, name?: string): unknown {
  return toProtoJson(routeConfigs(dump, name).map(({ '@type': _t, ...rest }) => rest));
}

/** One domain stands for the virtual host: the shortest one not starting with a digit. */
function describeDomains(domains: string[]): string {
  if (domains.length <= 1) return domains[0] ?? '';
  return domains.filter((d) => d !== '' && !/^[1-9]/.test(d)).reduce((best, d) => (d.length < best.length ? d : best), domains[0]);
}

function describeMatch(match: Record<string, unknown>): string {
  if (match.prefix !== undefined) return `${str(match.prefix)}*`;
  if (match.path !== undefined) return str(match.path);
  if (match.safe_regex !== undefined) return str(obj(match.safe_regex).regex);
  if (match.path_separated_prefix !== undefined) return `${str(match.path_separated_prefix)}/*`;
  return '';
}

/** `<name>.<namespace>` of the virtual service a route came from, per its config metadata. */
function virtualService(route: Record<string, unknown>): string {
  const config = str(obj(obj(obj(route.metadata).filter_metadata).mesh).config);
  const m = /\/namespaces\/([^/]+)\/virtual-service\/([^/]+)$/.exec(config);
  return m ? `${m[2]}.${m[1]}` : '';
}

/** The verbose routes table: NAME, VHOST NAME, DOMAINS, MATCH, VIRTUAL SERVICE. */
export function routesTable(dump: ConfigDump, name?: string, prefix = ''): string {
  const rows: string[][] = [];
  for (const config of routeConfigs(dump, name)) {
    const routeName = str(config.name);
    for (const vhost of list(config.virtual_hosts).map(obj)) {
      for (const route of list(vhost.routes).map(obj)) {
        rows.push([routeName === '' && prefix === '' ? '' : prefix + routeName, str(vhost.name), describeDomains(list(vhost.domains).map(str)), describeMatch(obj(route.match)), virtualService(route)]);
      }
    }
  }
  return alignColumns([['NAME', 'VHOST NAME', 'DOMAINS', 'MATCH', 'VIRTUAL SERVICE'], ...rows], TABLE_GAP);
}
