/**
 * The reference for what a proxy built on the built-in proxy's stack can reach here: a bare
 * forwarder (no filters, no routing) with node:http downstream and an undici pool upstream, as
 * the built-in proxy's router has, in its own process. The built-in proxy's gap to it is its
 * own work; its gap to the app is Node's.
 */
import * as http from 'node:http';
import { Pool } from 'undici';
import type { Dispatcher } from 'undici';

const HOP_BY_HOP = new Set(['connection', 'keep-alive', 'transfer-encoding', 'upgrade', 'te', 'trailer', 'expect']);
const upstreamPort = Number(process.argv[2]);
const pool = new Pool(`http://127.0.0.1:${upstreamPort}`, { connections: null, headersTimeout: 0, bodyTimeout: 0 });

const server = http.createServer((req, res) => {
  const headers: Record<string, string | string[]> = {};
  for (const k in req.headers) if (!HOP_BY_HOP.has(k)) headers[k] = req.headers[k]!;
  const hasBody = req.headers['transfer-encoding'] !== undefined || (req.headers['content-length'] ?? '0') !== '0';
  if (!hasBody) req.resume();
  const handler: Dispatcher.DispatchHandler = {
    // undici takes a handler for its controller-style API by this method being there.
    onRequestStart: () => undefined,
    onResponseStart(_c, status, received) {
      if (status < 200) return;
      const out: Record<string, string | string[]> = {};
      for (const k in received) if (!HOP_BY_HOP.has(k)) out[k] = received[k]!;
      res.writeHead(status, out);
    },
    onResponseData(controller, chunk) {
      if (!res.write(chunk)) {
        controller.pause();
        res.once('drain', () => controller.resume());
      }
    },
    onResponseEnd: () => void res.end(),
    onResponseError: () => void res.destroy(),
  };
  pool.dispatch({ method: req.method ?? 'GET', path: req.url ?? '/', headers, body: hasBody ? req : null }, handler);
});
server.keepAliveTimeout = 60_000;
server.listen(0, '127.0.0.1', () => {
  const address = server.address();
  process.send?.({ port: typeof address === 'object' && address ? address.port : 0 });
});
