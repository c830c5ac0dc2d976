/**
 * The ceiling of any proxy in a Node process here: a TCP relay that copies bytes both ways and
 * reads no HTTP at all, in its own process. An HTTP proxy does this and parses, filters and
 * routes besides, so its req/s stays below this row's.
 */
import * as net from 'node:net';

const upstreamPort = Number(process.argv[2]);
const server = net.createServer((downstream) => {
  const upstream = net.connect({ host: '127.0.0.1', port: upstreamPort, noDelay: true });
  downstream.setNoDelay(true);
  downstream.pipe(upstream).pipe(downstream);
  downstream.on('error', () => upstream.destroy());
  upstream.on('error', () => downstream.destroy());
  downstream.on('close', () => upstream.destroy());
  upstream.on('close', () => downstream.destroy());
});
server.listen(0, '127.0.0.1', () => {
  const address = server.address();
  process.send?.({ port: typeof address === 'object' && address ? address.port : 0 });
});
