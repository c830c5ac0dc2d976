import * as net from 'node:net';
import { hostPort, ProbeOutcome } from './outcome';

/** Succeeds when a TCP connection to host:port opens within the timeout (then closes it), as the kubelet's tcpSocket probe. */
export function probeTcp(host: string, port: number, timeoutMs: number): Promise<ProbeOutcome> {
  const target = hostPort(host, port);
  return new Promise((resolve) => {
    const socket = net.connect({ host, port });
    const timer = setTimeout(() => {
      socket.destroy();
      resolve({ status: 500, detail: `TCP connection to ${target} not open after ${timeoutMs}ms` });
    }, timeoutMs);
    socket.once('connect', () => {
      clearTimeout(timer);
      socket.destroy();
      resolve({ status: 200, detail: `TCP connection to ${target} opened` });
    });
    socket.once('error', (err) => {
      clearTimeout(timer);
      resolve({ status: 500, detail: `TCP connection to ${target} failed: ${err.message}` });
    });
  });
}
