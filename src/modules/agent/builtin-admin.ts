/**
 * The built-in proxy's admin port (ProxyConfig proxyAdminPort, 127.0.0.1 only, as Envoy's is
 * meant to be): `/config_dump` in Envoy's layout (snake_case fields, `@type` on each section),
 * `/clusters?format=json`, `/listeners` and `/ready`, for `pilot-agent request` and debugging.
 */
import * as http from 'node:http';
import { listenOn } from '../monitoring/listen-address';
import { stopHttpServer } from '../monitoring/http-lifecycle';
import { BuiltInProxy } from '../proxy/builtin-proxy';
import { ConfigDumpType } from '../envoy/well-known';
import { TypeUrl } from '../envoy/type-urls';


export class BuiltInAdminServer {
  private readonly server = http.createServer((req, res) => this.handle(req, res));

  constructor(private readonly proxy: BuiltInProxy) {}

  async start(port: number): Promise<number> {
    return (await listenOn(this.server, { host: '127.0.0.1', port }, 'proxy admin server')).port;
  }

  stop(): Promise<void> {
    return stopHttpServer(this.server);
  }

  private handle(req: http.IncomingMessage, res: http.ServerResponse): void {
    const url = new URL(req.url ?? '/', 'http://admin');
    const json = (body: unknown): void => void res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(body, null, 2) + '\n');
    switch (url.pathname) {
      case '/config_dump':
        return json(this.configDump());
      case '/clusters':
        if (url.searchParams.get('format') === 'json') return json(this.clusterStatuses());
        res.writeHead(200, { 'content-type': 'text/plain' });
        res.end(
          this.clusterStatuses()
            .cluster_statuses.flatMap((c) => c.host_statuses.map((h) => `${c.name}::${h.address.socket_address.address}:${h.address.socket_address.port_value}::health_flags::healthy\n`))
            .join(''),
        );
        return;
      case '/listeners':
        return json(this.proxy.boundListeners());
      case '/ready': {
        const ready = this.proxy.ready();
        res.writeHead(ready ? 200 : 503, { 'content-type': 'text/plain' });
        res.end(ready ? 'LIVE\n' : 'PRE_INITIALIZING\n');
        return;
      }
      default:
        res.writeHead(404, { 'content-type': 'text/plain' });
        res.end(`unknown admin path ${url.pathname}; known: /config_dump /clusters /listeners /ready\n`);
    }
  }

  private configDump(): unknown {
    const c = this.proxy.config();
    return {
      configs: [
        { '@type': ConfigDumpType.Clusters, dynamic_active_clusters: [...c.clusters.values()].map((cluster) => ({ cluster: { '@type': TypeUrl.Cluster, ...cluster } })) },
        {
          '@type': ConfigDumpType.Listeners,
          dynamic_listeners: [...c.listeners].map(([name, listener]) => ({ name, active_state: { listener: { '@type': TypeUrl.Listener, ...listener } } })),
        },
        { '@type': ConfigDumpType.Routes, dynamic_route_configs: [...c.routes.values()].map((r) => ({ route_config: { '@type': TypeUrl.RouteConfiguration, ...r } })) },
        {
          '@type': ConfigDumpType.Endpoints,
          dynamic_endpoint_configs: [...c.endpoints.values()].map((e) => ({ endpoint_config: { '@type': TypeUrl.ClusterLoadAssignment, ...e } })),
        },
      ],
    };
  }

  private clusterStatuses() {
    return {
      cluster_statuses: this.proxy.clusters.names().map((name) => ({
        name,
        host_statuses: this.proxy.clusters.endpointsOf(name).map((e) => ({
          address: { socket_address: { address: e.address, port_value: e.port } },
          health_status: { eds_health_status: 'HEALTHY' },
          weight: e.weight,
        })),
      })),
    };
  }
}
