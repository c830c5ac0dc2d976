import * as net from 'node:net';
import { Worker } from 'node:worker_threads';

/** An address where a TCP connection is never established (its SYN goes unanswered). */
export interface UnansweredEndpoint {
  port: number;
  close(): Promise<void>;
}

/**
 * A listener on 127.0.0.1 whose accept queue is full and never drained, so the kernel drops
 * further connection attempts: a real "connect hangs" without firewall rules. The listener
 * lives in a worker thread that blocks right after listening, so nothing ever accepts; two
 * connections fill its backlog of one.
 */
export async function unansweredEndpoint(): Promise<UnansweredEndpoint> {
  const worker = new Worker(
    `const net = require('node:net');
     const { parentPort } = require('node:worker_threads');
     const server = net.createServer();
     server.listen({ port: 0, host: '127.0.0.1', backlog: 1 }, () => {
       parentPort.postMessage(server.address().port);
       setImmediate(() => Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0));
     });`,
    { eval: true },
  );
  const port = await new Promise<number>((resolve, reject) => {
    worker.once('message', resolve);
    worker.once('error', reject);
  });
  const fillers: net.Socket[] = [];
  for (let i = 0; i < 2; i++) {
    const socket = net.connect(port, '127.0.0.1');
    socket.on('error', () => undefined);
    await new Promise<void>((resolve, reject) => {
      socket.once('connect', () => resolve());
      socket.once('error', reject);
    });
    fillers.push(socket);
  }
  return {
    port,
    close: async () => {
      for (const socket of fillers) socket.destroy();
      await worker.terminate();
    },
  };
}
