/**
 * `/server_info`, `/ready` and `/stats` of the built-in proxy, with Envoy's field names, state
 * names and stat names: LIVE once the first configuration is in force, PRE_INITIALIZING before.
 */
import type { BuiltInProxyView } from '../../proxy/builtin-proxy';
import { AdminHandler, json, text } from './handlers';

function state(proxy: BuiltInProxyView): 'LIVE' | 'PRE_INITIALIZING' {
  return proxy.ready() ? 'LIVE' : 'PRE_INITIALIZING';
}

/** Envoy's `server.state` gauge values. */
const STATE_GAUGE = { LIVE: 0, DRAINING: 1, PRE_INITIALIZING: 2, INITIALIZING: 3 } as const;

export function serverInfoHandler(proxy: BuiltInProxyView, version: string): AdminHandler {
  return {
    path: '/server_info',
    help: 'print server version/status information',
    mutates: false,
    handle: () => {
      const uptime = `${Math.floor(proxy.uptimeMs() / 1000)}s`;
      const node = proxy.node();
      return json({
        version,
        state: state(proxy),
        hot_restart_version: 'disabled',
        command_line_options: {},
        node: node ? { id: node.id, cluster: node.cluster, metadata: node.metadata } : {},
        uptime_current_epoch: uptime,
        uptime_all_epochs: uptime,
      });
    },
  };
}

export function readyHandler(proxy: BuiltInProxyView): AdminHandler {
  return {
    path: '/ready',
    help: 'print server state, return 200 if LIVE, otherwise return 503',
    mutates: false,
    handle: () => {
      const s = state(proxy);
      return text(s === 'LIVE' ? 200 : 503, `${s}\n`);
    },
  };
}

/** The proxy's gauges as Envoy names them; `format=json` and `filter=<regex>` as Envoy takes them. */
export function statsHandler(proxy: BuiltInProxyView): AdminHandler {
  return {
    path: '/stats',
    help: 'print server stats',
    mutates: false,
    params: [
      { id: 'filter', help: 'Regular expression for filtering stats' },
      { id: 'format', help: 'Format to use', choices: ['html', 'text', 'json'] },
    ],
    handle: ({ url }) => {
      let stats: [string, number][] = [
        ['cluster_manager.active_clusters', proxy.clusterStatuses().length],
        ['listener_manager.total_listeners_active', Object.keys(proxy.boundListeners()).length],
        ['server.live', proxy.ready() ? 1 : 0],
        ['server.state', STATE_GAUGE[state(proxy)]],
        ['server.total_connections', proxy.activeConnections()],
        ['server.uptime', Math.floor(proxy.uptimeMs() / 1000)],
      ];
      const filter = url.searchParams.get('filter');
      if (filter) {
        let re: RegExp;
        try {
          re = new RegExp(filter);
        } catch (err) {
          return text(400, `Invalid regex: ${(err as Error).message}\n`);
        }
        stats = stats.filter(([name]) => re.test(name));
      }
      if (url.searchParams.get('format') === 'json') return json({ stats: stats.map(([name, value]) => ({ name, value })) });
      return text(200, stats.map(([name, value]) => `${name}: ${value}\n`).join(''));
    },
  };
}
