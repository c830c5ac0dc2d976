import { versionSummary } from './bootstrap';
import { ClusterFilter, clustersTable } from './clusters';
import { ConfigDump } from './dump';
import { edsTable } from './eds';
import { ListenerFilter, listenersTable } from './listeners';
import { routesTable } from './routes';
import { secretsTable } from './secrets';

export type AllFilter = ClusterFilter & ListenerFilter & { name?: string };

/**
 * `proxy-config all`: the version lines, then the cluster, listener, route, secret and endpoint
 * tables, names prefixed by their kind, separated by blank lines (headed with `withHeaders`).
 */
export function allSummary(dump: ConfigDump, f: AllFilter, withHeaders: boolean): string {
  const parts: [string, string][] = [
    ['BOOTSTRAP', versionSummary(dump)],
    ['CLUSTER', clustersTable(dump, f, 'cluster/')],
    ['LISTENER', listenersTable(dump, { address: f.address, port: f.port, type: f.type }, true, 'listener/')],
    ['ROUTE', routesTable(dump, f.name, 'route/')],
    ['SECRET', secretsTable(dump, 'secret/')],
    ['ENDPOINT', edsTable(dump, { address: f.address, port: f.port }, 'endpoint/')],
  ];
  return parts.map(([title, text]) => (withHeaders ? `------ ${title} INFO ------\n${text}` : text)).join('\n');
}
