/** The benchmark's upstream app, in its own process: a fixed small JSON answer. */
import * as http from 'node:http';

const body = Buffer.from(JSON.stringify({ ok: true, service: 'httpbin' }));
const server = http.createServer((req, res) => {
  req.resume();
  res.writeHead(200, { 'content-type': 'application/json', 'content-length': String(body.length) });
  res.end(body);
});
server.keepAliveTimeout = 60_000;
server.listen(0, '127.0.0.1', () => {
  const address = server.address();
  process.send?.({ port: typeof address === 'object' && address ? address.port : 0 });
});
