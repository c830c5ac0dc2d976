import type { IncomingMessage, ServerResponse } from 'node:http';

/**
 * Contribution point: handlers served on the daemon's HTTPS address (`--httpsAddr`), where the
 * orchestrator's API server calls the admission webhooks. The daemon's HTTPS server routes a
 * request to the handler claiming its path.
 */
export const HttpsHandler = Symbol.for('mesh.HttpsHandler');
export interface HttpsHandler {
  /**
   * The paths this handler answers, read when the server starts: exact paths (`/inject`) and
   * prefixes ending in `/` (`/inject/`, for path parameters). Empty when it is switched off.
   */
  paths(): readonly string[];
  /** Answers one request; must not throw (the server answers 500 if it does). */
  handle(req: IncomingMessage, res: ServerResponse, path: string): Promise<void>;
  /** Called before the server listens (loading what the handler serves with; a switched-off one says so). */
  start?(): Promise<void>;
  /** Called when the server stops. */
  stop?(): void;
}

/** The paths each handler claimed when the server started. */
export type HttpsRoutes = ReadonlyArray<{ handler: HttpsHandler; paths: readonly string[] }>;

export function httpsRoutes(handlers: readonly HttpsHandler[]): HttpsRoutes {
  return handlers.map((handler) => ({ handler, paths: handler.paths() }));
}

/** The handler of `path`: an exact path wins over the longest matching prefix. */
export function routeHttps(routes: HttpsRoutes, path: string): HttpsHandler | undefined {
  let best: { handler: HttpsHandler; length: number } | undefined;
  for (const { handler, paths } of routes) {
    for (const p of paths) {
      if (p === path) return handler;
      if (p.endsWith('/') && path.startsWith(p) && (!best || p.length > best.length)) best = { handler, length: p.length };
    }
  }
  return best?.handler;
}
