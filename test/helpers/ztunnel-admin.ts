import * as http from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * A local HTTP server playing a ztunnel's admin port for meshctl tests: `GET /config_dump`
 * serves the given dump, and `/logging` keeps a log filter as ztunnel does (POST only; no
 * query or an empty `level` lists it; `level=<directives>` adds `<level>` or `<target>=<level>`
 * clauses to the current filter; `reset` starts again from the start-up filter), answering
 * `current log level is <filter>` or 400 with ztunnel's help text.
 */
export interface ZtunnelAdmin {
  port: number;
  /** Every request, as `METHOD /path?query`. */
  requests: string[];
  /** The current log filter, as ztunnel prints it. */
  filter(): string;
  close(): Promise<void>;
}

export interface ZtunnelAdminOptions {
  /** The body of `/config_dump` (a value is served as JSON). */
  dump: unknown;
  /** Status and body for every request instead, as a broken ztunnel would answer. */
  broken?: { status: number; body: string };
}

const LEVELS = new Set(['off', 'error', 'warn', 'info', 'debug', 'trace']);
const START_TARGETS: [string, string][] = [['hickory_server::server::server_future', 'off']];
const START_LEVEL = 'info';
const HELP = `
usage: POST /logging\t\t\t\t\t\t(To list current level)
usage: POST /logging?level=<level>\t\t\t\t(To change global levels)
usage: POST /logging?level={mod1}:{level1},{mod2}:{level2}\t(To change specific mods' logging level)

hint: loglevel:\terror|warn|info|debug|trace|off
hint: mod_name:\tthe module name, i.e. ztunnel::proxy
`;

export async function startZtunnelAdmin(options: ZtunnelAdminOptions): Promise<ZtunnelAdmin> {
  let targets = new Map(START_TARGETS);
  let level = START_LEVEL;
  const requests: string[] = [];
  const filter = () => [...[...targets].map(([t, l]) => `${t}=${l}`), level].join(',');
  const valid = (clauses: string[]) => clauses.every((c) => LEVELS.has(c) || (c.includes('=') && LEVELS.has(c.slice(c.indexOf('=') + 1)) && c.indexOf('=') > 0));

  const server = http.createServer((req, res) => {
    requests.push(`${req.method} ${req.url}`);
    const send = (status: number, body: string, type = 'text/plain') => {
      res.writeHead(status, { 'content-type': type });
      res.end(body);
    };
    req.resume();
    if (options.broken) return send(options.broken.status, options.broken.body);
    const url = new URL(req.url ?? '/', 'http://ztunnel');
    if (url.pathname === '/config_dump') {
      return send(200, typeof options.dump === 'string' ? options.dump : JSON.stringify(options.dump, null, 2), 'application/json');
    }
    if (url.pathname !== '/logging') return send(404, '');
    if (req.method !== 'POST') return send(405, `Invalid HTTP method\n ${HELP}`);
    const wanted = url.searchParams.get('level') ?? '';
    const reset = url.searchParams.has('reset');
    if (wanted !== '' || reset) {
      const clauses = wanted === '' ? [] : wanted.split(',');
      if (!valid(clauses)) return send(400, `Invalid level provided: ${wanted}\n${HELP}`);
      if (reset) {
        targets = new Map(START_TARGETS);
        level = START_LEVEL;
      }
      for (const clause of clauses) {
        const eq = clause.indexOf('=');
        if (eq < 0) level = clause;
        else targets.set(clause.slice(0, eq), clause.slice(eq + 1));
      }
    }
    send(200, `current log level is ${filter()}\n`);
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', resolve);
  });
  return {
    port: (server.address() as AddressInfo).port,
    requests,
    filter,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
