import { alignColumns, TABLE_GAP } from './columns';
import { ConfigDump, list, obj, requireSection, str } from './dump';
import { toProtoJson } from './proto-json';

const HCM = 'envoy.filters.network.http_connection_manager';
const TCP_PROXY = 'envoy.filters.network.tcp_proxy';

/** Filters of `proxy-config listener`; type is HTTP, TCP or HTTP+TCP, any case. */
export interface ListenerFilter {
  address?: string;
  port?: number;
  type?: string;
}

type Listener = Record<string, unknown>;

function socket(l: Listener): { address: string; port: number } {
  const sock = obj(obj(l.address).socket_address);
  const extra = list(l.additional_addresses).map((a) => str(obj(obj(obj(a).address).socket_address).address));
  return { address: [str(sock.address), ...extra].filter(Boolean).join(','), port: typeof sock.port_value === 'number' ? sock.port_value : 0 };
}

function chains(l: Listener): Record<string, unknown>[] {
  return [...list(l.filter_chains), ...(l.default_filter_chain ? [l.default_filter_chain] : [])].map(obj);
}

function listenerType(l: Listener): string {
  const kinds = new Set<string>(chains(l).map((c) => (list(c.filters).some((f) => str(obj(f).name) === HCM) ? 'HTTP' : 'TCP')));
  return ['HTTP', 'TCP'].filter((k) => kinds.has(k)).join('+');
}

/** Static and active dynamic listeners that match, sorted by address then port. */
function listeners(dump: ConfigDump, f: ListenerFilter): Listener[] {
  const section = requireSection(dump, 'ListenersConfigDump');
  const all = [...list(section.static_listeners).map((l) => obj(obj(l).listener)), ...list(section.dynamic_listeners).map((l) => obj(obj(obj(l).active_state).listener))];
  return all
    .filter((l) => Object.keys(l).length > 0)
    .filter((l) => {
      const s = socket(l);
      if (f.address && !s.address.split(',').includes(f.address)) return false;
      if (f.port && s.port !== f.port) return false;
      if (f.type && listenerType(l).toUpperCase() !== f.type.toUpperCase()) return false;
      return true;
    })
    .sort((a, b) => {
      const x = socket(a);
      const y = socket(b);
      return x.address < y.address ? -1 : x.address > y.address ? 1 : x.port - y.port;
    });
}

export function listenersData(dump: ConfigDump, f: ListenerFilter): unknown {
  return toProtoJson(listeners(dump, f).map(({ '@type': _t, ...rest }) => rest));
}

/** The conditions of a filter chain match; ALL when it has none. */
function describeChainMatch(m: Record<string, unknown>): string {
  const parts: string[] = [];
  if (list(m.server_names).length) parts.push(`SNI: ${list(m.server_names).map(str).join(',')}`);
  if (m.transport_protocol) parts.push(`Trans: ${str(m.transport_protocol)}`);
  if (list(m.application_protocols).length) parts.push(`App: ${list(m.application_protocols).map(str).join(',')}`);
  if (list(m.prefix_ranges).length) parts.push(`Addr: ${list(m.prefix_ranges).map((r) => `${str(obj(r).address_prefix)}/${str(obj(r).prefix_len)}`).join(',')}`);
  if (m.destination_port !== undefined) parts.push(`Port: ${str(m.destination_port)}`);
  return parts.length ? parts.join('; ') : 'ALL';
}

const clusterText = (cluster: string) => (cluster.includes('Cluster') ? cluster : `Cluster: ${cluster}`);

/** An inline route config: its cluster when it sends everything to one, else its matches. */
function describeInlineRoutes(config: Record<string, unknown>): string {
  const vhosts = list(config.virtual_hosts).map(obj);
  const only = vhosts.length === 1 ? vhosts[0] : undefined;
  const routes = list(only?.routes).map(obj);
  if (only && JSON.stringify(only.domains) === '["*"]' && routes.length === 1 && str(obj(routes[0].match).prefix) === '/' && obj(routes[0].route).cluster !== undefined) {
    return clusterText(str(obj(routes[0].route).cluster));
  }
  const described = vhosts.map((vh) => {
    const domains = list(vh.domains).map(str);
    const matches = list(vh.routes)
      .map((r) => obj(obj(r).match))
      .map((m) => (m.prefix !== undefined ? `${str(m.prefix)}*` : m.path !== undefined ? str(m.path) : str(obj(m.safe_regex).regex)))
      .join(', ');
    return domains.length === 1 && domains[0] === '*' ? matches : `${domains.join('/')} ${matches}`;
  });
  return `Inline Route: ${described.join('; ')}`;
}

/** Where a filter chain sends traffic: its TCP proxy's cluster or its HTTP route. */
function describeDestination(chain: Record<string, unknown>): string {
  for (const filter of list(chain.filters).map(obj)) {
    const config = obj(filter.typed_config);
    if (str(filter.name) === TCP_PROXY && config.cluster !== undefined) return clusterText(str(config.cluster));
    if (str(filter.name) === HCM) {
      if (config.rds !== undefined) return `Route: ${str(obj(config.rds).route_config_name)}`;
      if (config.route_config !== undefined) return describeInlineRoutes(obj(config.route_config));
    }
  }
  return 'Non-HTTP/Non-TCP';
}

/**
 * Verbose: a row per filter chain (ADDRESSES, PORT, MATCH, DESTINATION), sorted by destination
 * descending as the reference does; else a row per listener (ADDRESSES, PORT, TYPE). With
 * `prefix` (in `all`) a NAME column comes first and the gap is 1.
 */
export function listenersTable(dump: ConfigDump, f: ListenerFilter, verbose: boolean, prefix?: string): string {
  const rows: string[][] = [];
  for (const l of listeners(dump, f)) {
    const s = socket(l);
    const named = (cells: string[]) => (prefix === undefined ? cells : [prefix + str(l.name), ...cells]);
    if (!verbose) {
      rows.push(named([s.address, String(s.port), listenerType(l)]));
      continue;
    }
    const described = chains(l).map((c) => ({ match: describeChainMatch(obj(c.filter_chain_match)), destination: describeDestination(c) }));
    described.sort((a, b) => (a.destination > b.destination ? -1 : a.destination < b.destination ? 1 : 0));
    for (const d of described) rows.push(named([s.address, String(s.port), d.match, d.destination]));
  }
  const header = verbose ? ['ADDRESSES', 'PORT', 'MATCH', 'DESTINATION'] : ['ADDRESSES', 'PORT', 'TYPE'];
  return alignColumns([prefix === undefined ? header : ['NAME', ...header], ...rows], prefix === undefined ? TABLE_GAP : 1);
}
