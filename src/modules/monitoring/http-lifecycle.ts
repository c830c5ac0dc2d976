import type { Server } from 'node:http';

/**
 * Stops `server` accepting connections and drops its idle keep-alive ones, so shutdown is not
 * held up by clients (scrapers, debug requests). Resolves at once when it is not listening.
 */
export function stopHttpServer(server: Server): Promise<void> {
  if (!server.listening) return Promise.resolve();
  return new Promise((resolve) => {
    server.close(() => resolve());
    server.closeIdleConnections();
  });
}
