/**
 * The reference for what any proxy built on node:http can reach here: a bare forwarder (no
 * filters, no routing) with the same keep-alive upstream pool as the built-in proxy, in its
 * own process. The built-in proxy's gap to it is its own work; its gap to the app is Node's.
 */
import * as http from 'node:http';

const upstreamPort = Number(process.argv[2]);
const agent = new http.Agent({ keepAlive: true, maxSockets: 1024 });
const server = http.createServer((req, res) => {
  const upstream = http.request({ host: '127.0.0.1', port: upstreamPort, method: req.method, path: req.url, headers: req.headers, agent }, (answer) => {
    res.writeHead(answer.statusCode ?? 502, answer.headers);
    answer.pipe(res);
  });
  upstream.on('error', () => res.destroy());
  req.pipe(upstream);
});
server.keepAliveTimeout = 60_000;
server.listen(0, '127.0.0.1', () => {
  const address = server.address();
  process.send?.({ port: typeof address === 'object' && address ? address.port : 0 });
});
