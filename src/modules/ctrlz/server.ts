import * as http from 'node:http';
import * as os from 'node:os';
import { inject, injectable } from 'inversify';
import { BuildInfo, BuildInfoToken } from '../build-info';
import { Logging, LoggingToken } from '../logging';
import { stopHttpServer } from '../monitoring/http-lifecycle';
import { ListenAddress, listenOn } from '../monitoring/listen-address';
import { Environment } from '../settings/environment';
import { escapeHtml, NavLink, page } from './html';
import { BodyTooLargeError, readBody, send, sendHtml, sendJson, sendText } from './http-util';
import { isPprofPath, pprofResponse } from './pprof/http';
import { InProcessProfiler } from './pprof/profiler';
import { SCOPES_API_PATH } from './scope-info';
import { allScopes, applyScopeUpdate, formScopeUpdate, oneScope, parseScopeUpdate, ScopeRequestError, scopesHtml } from './scopes';
import { argsTopic, envTopic, homeHtml, homeInfo, memTopic, metricsTopic, MetricsJsonSource, procTopic, Topic, topic, versionTopic } from './topics';

/** Bound by the program that runs the facility (the daemon, from `--ctrlz_address`/`--ctrlz_port`/`--profile`). */
export const ControlzOptionsToken = Symbol.for('mesh.ControlzOptions');
export interface ControlzOptions {
  address: ListenAddress;
  /** `--profile`: serve `/debug/pprof/` (else those paths answer 404 saying how to turn it on). */
  profile: boolean;
  /** The program's metrics, for the metrics page. */
  metrics?: MetricsJsonSource;
}

/** A scope change is a few fields; anything much bigger is not one. */
const MAX_BODY_BYTES = 16 * 1024;

interface Route {
  path: string;
  query: URLSearchParams;
}

/**
 * The introspection facility (ControlZ, the incumbent's "ctrlz"): pages about the running
 * process (logging scopes, memory, environment, process, arguments, version, metrics) at
 * `/<topic>z/`, the same as JSON at `/<topic>j/`, the scopes API that changes the live
 * logging (`/scopej/`), and with `--profile` the pprof profiles under `/debug/pprof/`.
 */
@injectable()
export class ControlzServer {
  private readonly server: http.Server;
  private readonly topics: Topic[];
  private readonly nav: NavLink[];
  private readonly instance: string;

  constructor(
    @inject(ControlzOptionsToken) private readonly options: ControlzOptions,
    @inject(LoggingToken) private readonly logging: Logging,
    @inject(InProcessProfiler) private readonly profiler: InProcessProfiler,
    @inject(BuildInfoToken) build: BuildInfo,
    @inject(Environment) env: Environment,
  ) {
    this.topics = [
      topic('Logging Scopes', 'scope', () => allScopes(this.logging), (scopes) => scopesHtml(scopes)),
      memTopic,
      envTopic(env),
      procTopic,
      argsTopic,
      versionTopic(build),
      ...(options.metrics ? [metricsTopic(options.metrics)] : []),
    ];
    this.nav = [{ title: 'Home', href: '/' }, ...this.topics.map((t) => ({ title: t.title, href: `/${t.prefix}z/` })), { title: 'Profiling', href: '/debug/pprof/' }];
    this.instance = `${logging.program} - ${os.hostname()}`;
    this.server = http.createServer((req, res) => void this.handle(req, res));
  }

  /** Listens; resolves with the bound address (port 0 becomes the chosen one). */
  start(): Promise<ListenAddress> {
    return listenOn(this.server, this.options.address, 'ControlZ');
  }

  stop(): Promise<void> {
    return stopHttpServer(this.server);
  }

  private async handle(req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
    // Split by hand: new URL() would read `//x/y` as host x.
    const [path, search = ''] = (req.url ?? '/').split(/\?(.*)/s);
    const route = { path, query: new URLSearchParams(search) };
    try {
      await this.route(req, res, route);
    } catch (err) {
      if (res.headersSent) return void res.destroy();
      if (err instanceof BodyTooLargeError) return sendText(res, 413, `${err.message}\n`, { Connection: 'close' });
      if (err instanceof ScopeRequestError) return sendJson(res, err.status, { error: err.message });
      this.logging.scope('default').error(`ControlZ ${req.method} ${path} failed: ${(err as Error).message}`);
      sendText(res, 500, `${path}: ${(err as Error).message}\n`);
    }
  }

  private async route(req: http.IncomingMessage, res: http.ServerResponse, { path, query }: Route): Promise<void> {
    const method = req.method ?? 'GET';
    if (isPprofPath(path)) {
      if (!allow(res, method, ['GET', 'HEAD'])) return;
      return this.pprof(res, path, query);
    }
    if (path === SCOPES_API_PATH || path.startsWith(SCOPES_API_PATH + '/')) return this.scopesApi(req, res, path.slice(SCOPES_API_PATH.length));
    if (path === '/scopez' || path === '/scopez/') {
      if (method === 'POST') return this.scopesForm(req, res);
      if (!allow(res, method, ['GET', 'HEAD', 'POST'])) return;
      const changed = query.get('changed');
      return sendHtml(res, 200, this.page('Logging Scopes', '/scopez/', scopesHtml(allScopes(this.logging), changed ? { error: false, text: `Scope ${changed} changed.` } : undefined)));
    }
    if (!allow(res, method, ['GET', 'HEAD'])) return;
    if (path === '/') return sendHtml(res, 200, this.page('Home', '/', homeHtml(homeInfo(), this.topics, this.options.profile)));
    if (path === '/homej' || path === '/homej/') return sendJson(res, 200, homeInfo());
    for (const t of this.topics) {
      if (path === `/${t.prefix}j` || path === `/${t.prefix}j/`) return sendJson(res, 200, await t.data());
      if (path === `/${t.prefix}z` || path === `/${t.prefix}z/`) return sendHtml(res, 200, this.page(t.title, `/${t.prefix}z/`, await t.body()));
    }
    sendHtml(res, 404, this.page('Not Found', '', `<p>Nothing at <code>${escapeHtml(path.slice(0, 200))}</code>. The topics are listed on the left.</p>`));
  }

  /** `/scopej/` (GET: every scope) and `/scopej/<name>` (GET: one; PUT: change it). */
  private async scopesApi(req: http.IncomingMessage, res: http.ServerResponse, rest: string): Promise<void> {
    const method = req.method ?? 'GET';
    if (rest === '' || rest === '/') {
      if (!allow(res, method, ['GET', 'HEAD'])) return;
      return sendJson(res, 200, allScopes(this.logging));
    }
    const name = decodeSegment(rest.slice(1));
    if (method === 'PUT') {
      const body = await readBody(req, MAX_BODY_BYTES);
      // An unknown scope is a 404 whatever the body says.
      oneScope(this.logging, name);
      let parsed: unknown;
      try {
        parsed = JSON.parse(body.toString('utf8'));
      } catch (err) {
        throw new ScopeRequestError(400, `the body is not valid JSON: ${(err as Error).message}`);
      }
      const now = applyScopeUpdate(this.logging, name, parseScopeUpdate(name, parsed));
      this.logging.scope('default').info(`ControlZ: scope ${name} set to output ${now.output_level}, stack trace ${now.stack_trace_level}`);
      return sendJson(res, 202, now);
    }
    if (!allow(res, method, ['GET', 'HEAD', 'PUT'])) return;
    return sendJson(res, 200, oneScope(this.logging, name));
  }

  /** A row of the scopes page submitted: apply it, then back to the page (303), or the page with the error. */
  private async scopesForm(req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
    // A form post is the one request another site's page can make a browser send; only our own pages may.
    if (!sameOrigin(req)) return sendText(res, 403, 'cross-origin form posts are refused\n');
    const form = new URLSearchParams((await readBody(req, MAX_BODY_BYTES)).toString('utf8'));
    try {
      const { name, update } = formScopeUpdate(form);
      applyScopeUpdate(this.logging, name, parseScopeUpdate(name, update));
      this.logging.scope('default').info(`ControlZ: scope ${name} changed from the scopes page`);
      res.writeHead(303, { Location: `/scopez/?changed=${encodeURIComponent(name)}`, 'Content-Length': 0 });
      res.end();
    } catch (err) {
      if (!(err instanceof ScopeRequestError)) throw err;
      sendHtml(res, err.status, this.page('Logging Scopes', '/scopez/', scopesHtml(allScopes(this.logging), { error: true, text: err.message })));
    }
  }

  private async pprof(res: http.ServerResponse, path: string, query: URLSearchParams): Promise<void> {
    // A client that goes away ends its CPU profile early, freeing the profiler for the next.
    const abort = new AbortController();
    res.once('close', () => {
      if (!res.writableFinished) abort.abort();
    });
    const r = await pprofResponse(path, query, this.options.profile ? this.profiler : undefined, abort.signal);
    if (abort.signal.aborted) return;
    send(res, r.status, r.contentType, r.body, r.headers);
  }

  private page(title: string, current: string, body: string): string {
    return page(title, this.instance, this.nav, current, body);
  }
}

function allow(res: http.ServerResponse, method: string, allowed: string[]): boolean {
  if (allowed.includes(method)) return true;
  sendText(res, 405, `method ${method} not allowed\n`, { Allow: allowed.join(', ') });
  return false;
}

/** A path segment as text; malformed %-escapes are the client's error. */
function decodeSegment(segment: string): string {
  try {
    return decodeURIComponent(segment);
  } catch {
    throw new ScopeRequestError(400, `malformed escape in the scope name ${JSON.stringify(segment.slice(0, 64))}`);
  }
}

/** No Origin (not a browser, or a same-origin navigation of an old one), or one naming this host. */
function sameOrigin(req: http.IncomingMessage): boolean {
  const origin = req.headers.origin;
  if (!origin) return true;
  try {
    return new URL(origin).host === req.headers.host;
  } catch {
    return false;
  }
}
