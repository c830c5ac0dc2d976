import { Protocol } from '../model';

/** Names the incumbent's protocol parser knows (case-insensitive), as our Protocol. */
const NAMED: Record<string, Protocol> = {
  tcp: 'TCP',
  udp: 'UDP',
  grpc: 'GRPC',
  'grpc-web': 'GRPC-WEB',
  http: 'HTTP',
  http_proxy: 'HTTP',
  http2: 'HTTP2',
  https: 'HTTPS',
  tls: 'TLS',
  mongo: 'MONGO',
  redis: 'REDIS',
  mysql: 'MYSQL',
};

/**
 * The protocol of an orchestrator Service port, as the incumbent decides it: UDP ports are UDP;
 * otherwise `appProtocol` when set (with the orchestrator's standard `kubernetes.io/h2c`, `ws`
 * and `wss`), else the port name's prefix before the first `-` (`http-web`, `grpc`; `grpc-web`
 * whole). Anything unknown is TCP: this mesh does not sniff protocols.
 */
export function portProtocol(port: { name?: string; protocol?: string; appProtocol?: string }): Protocol {
  if ((port.protocol ?? 'TCP').toUpperCase() === 'UDP') return 'UDP';
  let name = port.name ?? '';
  if (port.appProtocol) {
    switch (port.appProtocol) {
      case 'kubernetes.io/h2c':
        return 'HTTP2';
      case 'kubernetes.io/ws':
        return 'HTTP';
      case 'kubernetes.io/wss':
        return 'HTTPS';
    }
    name = port.appProtocol;
  }
  const lower = name.toLowerCase();
  if (lower.startsWith('grpc-web')) return 'GRPC-WEB';
  const dash = lower.indexOf('-');
  return NAMED[dash >= 0 ? lower.slice(0, dash) : lower] ?? 'TCP';
}
