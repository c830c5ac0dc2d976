import * as net from 'node:net';
import type { Duplex } from 'node:stream';
import { describeForward, ForwardTargetName, PortForwardError } from './forward-stream';

/** Where to listen locally: `localhost` (127.0.0.1 and ::1) or one IP address; port 0 picks a free one. */
export interface LocalForwardOptions {
  address: string;
  port: number;
  /** A connection's forward failed (the pod's port refused, the API went away); the connection is closed. */
  onError?: (err: Error) => void;
}

/** A local listener whose every connection is its own port-forward to the pod. */
export interface LocalForward {
  /** `http://<address>:<port>` of each bound address (`http://[::1]:<port>` for IPv6). */
  readonly urls: string[];
  /** The one to show a user: `http://localhost:<port>` when listening on localhost, else the first of `urls`. */
  readonly url: string;
  /** The local port (the same on every address). */
  readonly port: number;
  /** The addresses bound. */
  readonly addresses: string[];
  /** Stops listening (new connections are refused) and closes the connections open. */
  close(): Promise<void>;
}

/**
 * Listens on `options.address` and `options.port`; each accepted connection is piped both ways to
 * a forward `open` makes. `localhost` binds 127.0.0.1 and ::1 on one port (port 0: the one the
 * first bind picked) and fails only when neither binds. @throws PortForwardError naming address and port.
 */
export async function listenLocally(target: ForwardTargetName, options: LocalForwardOptions, open: () => Promise<Duplex>): Promise<LocalForward> {
  const addresses = addressesFor(options.address);
  if (!Number.isInteger(options.port) || options.port < 0 || options.port > 65535) throw new PortForwardError(`local port must be 0-65535, got ${options.port}`);
  const connections = new Set<{ local: net.Socket; remote?: Duplex }>();
  const servers: net.Server[] = [];
  const failures: string[] = [];
  let port = options.port;
  for (const address of addresses) {
    const server = net.createServer({ allowHalfOpen: true }, (local) => accept(local));
    try {
      await bind(server, address, port);
      port = (server.address() as net.AddressInfo).port;
      server.on('error', (err) => options.onError?.(err));
      servers.push(server);
    } catch (err) {
      failures.push(`${address}: ${(err as Error).message}`);
    }
  }
  if (servers.length === 0) {
    throw new PortForwardError(`cannot listen on ${options.address} port ${options.port} for ${describeForward(target)}: ${failures.join('; ')}`);
  }
  const bound = servers.map((s) => (s.address() as net.AddressInfo).address);
  const urls = bound.map((a) => `http://${a.includes(':') ? `[${a}]` : a}:${port}`);
  let closed = false;

  function accept(local: net.Socket): void {
    if (closed) {
      local.destroy();
      return;
    }
    const entry: { local: net.Socket; remote?: Duplex } = { local };
    connections.add(entry);
    local.pause();
    local.on('error', () => undefined);
    local.once('close', () => {
      connections.delete(entry);
      entry.remote?.destroy();
    });
    open().then(
      (remote) => {
        if (local.destroyed || closed) {
          remote.destroy();
          return;
        }
        entry.remote = remote;
        remote.on('error', (err) => {
          options.onError?.(err);
          local.destroy();
        });
        remote.on('close', () => {
          // The pod side is gone: let what was read reach the client, then close.
          if (!local.destroyed) local.end();
        });
        local.pipe(remote);
        remote.pipe(local);
        local.resume();
      },
      (err: Error) => {
        options.onError?.(err);
        local.destroy();
      },
    );
  }

  return {
    urls,
    url: options.address === 'localhost' ? `http://localhost:${port}` : urls[0],
    port,
    addresses: bound,
    close: async () => {
      closed = true;
      const done = servers.map((s) => new Promise<void>((resolve) => s.close(() => resolve())));
      for (const c of connections) {
        c.local.destroy();
        c.remote?.destroy();
      }
      connections.clear();
      await Promise.all(done);
    },
  };
}

function addressesFor(address: string): string[] {
  if (address === 'localhost') return ['127.0.0.1', '::1'];
  if (net.isIP(address)) return [address];
  throw new PortForwardError(`address must be localhost or an IP address, got ${JSON.stringify(address.slice(0, 80))}`);
}

function bind(server: net.Server, address: string, port: number): Promise<void> {
  return new Promise((resolve, reject) => {
    const onError = (err: Error) => reject(err);
    server.once('error', onError);
    server.listen({ host: address, port, ipv6Only: address.includes(':') }, () => {
      server.off('error', onError);
      resolve();
    });
  });
}
