/**
 * Listeners from LDS, bound as sockets. An update is built completely (every filter chain
 * created, every new address bound) before it replaces anything, so a config the proxy
 * cannot run is NACKed and the previous listeners keep serving. A listener whose address
 * stays the same keeps its socket and only swaps its chains: no connection is refused.
 */
import * as net from 'node:net';
import { ConnectionInfo } from '../http/filter-api';
import type { Decoded } from '../xds/xds-client';
import { ChainDependencies, FilterChain, selectChain } from './filter-chain';

const INSPECT_TIMEOUT_MS = 1000;

export interface Chains {
  chains: FilterChain[];
  fallback?: FilterChain;
  /** Some chain matches on, or terminates, TLS: peek at the first byte before choosing. */
  inspectsTransport?: boolean;
}

class BoundListener {
  chains: Chains = { chains: [] };

  constructor(
    readonly name: string,
    readonly address: string,
    readonly port: number,
    readonly server: net.Server,
  ) {
    server.on('connection', (socket) => this.accept(socket));
  }

  /** Downstream connections open now (drain waits for them; stop cuts them). */
  readonly open = new Set<net.Socket>();

  get active(): number {
    return this.open.size;
  }

  private accept(socket: net.Socket): void {
    socket.on('error', () => socket.destroy());
    this.open.add(socket);
    socket.once('close', () => this.open.delete(socket));
    const info: ConnectionInfo = {
      remoteAddress: plain(socket.remoteAddress),
      remotePort: socket.remotePort ?? 0,
      localAddress: plain(socket.localAddress),
      localPort: socket.localPort ?? this.port,
    };
    if (!this.chains.inspectsTransport) {
      this.dispatch(socket, info);
      return;
    }
    // Like Envoy's tls_inspector: a TLS ClientHello starts with a handshake record (0x16).
    // A client that waits for the server to speak first (MySQL) is plaintext after a moment.
    const timer = setTimeout(() => {
      socket.removeListener('data', onFirst);
      this.dispatch(socket, { ...info, transportProtocol: 'raw_buffer' });
    }, INSPECT_TIMEOUT_MS);
    const onFirst = (first: Buffer) => {
      clearTimeout(timer);
      socket.pause();
      this.dispatch(socket, { ...info, transportProtocol: first[0] === 0x16 ? 'tls' : 'raw_buffer' }, first);
    };
    socket.once('data', onFirst);
    socket.once('close', () => clearTimeout(timer));
  }

  private dispatch(socket: net.Socket, info: ConnectionInfo, first?: Buffer): void {
    const chain = chainFor(this.chains, info);
    if (!chain) socket.destroy();
    else chain.accept(socket, info, first);
  }
}

export class ListenerManager {
  private listeners = new Map<string, BoundListener>();

  constructor(private readonly deps: ChainDependencies) {}

  async apply(resources: Map<string, Decoded>): Promise<void> {
    const built = new Map<string, { config: Decoded; address: string; port: number; chains: Chains }>();
    const byAddress = new Map<string, string>();
    try {
      for (const [name, config] of resources) {
        if (config.bind_to_port?.value === false) continue;
        const socket = config.address?.socket_address;
        if (!socket?.address) throw new Error(`listener ${name}: only socket addresses are supported`);
        const address = String(socket.address);
        const port = Number(socket.port_value ?? 0);
        const key = `${address}:${port}`;
        if (byAddress.has(key)) throw new Error(`listeners ${byAddress.get(key)} and ${name} both bind ${key}`);
        byAddress.set(key, name);
        built.set(name, { config, address, port, chains: buildChains(name, config, this.deps) });
      }
    } catch (e) {
      for (const b of built.values()) closeChains(b.chains);
      throw e;
    }
    // Bind what is new (or moved) before touching anything that serves now.
    const fresh = new Map<string, BoundListener>();
    try {
      for (const [name, b] of built) {
        const current = this.listeners.get(name);
        if (current && current.address === b.address && current.port === b.port) continue;
        const taken = [...this.listeners.values()].find((l) => l.address === b.address && l.port === b.port && !built.has(l.name));
        if (taken) await closeServer(taken); // a removed listener frees the address for its successor
        fresh.set(name, new BoundListener(name, b.address, b.port, await listen(b.address, b.port, name)));
      }
    } catch (e) {
      for (const l of fresh.values()) await closeServer(l);
      for (const b of built.values()) closeChains(b.chains);
      throw e;
    }
    const next = new Map<string, BoundListener>();
    for (const [name, b] of built) {
      const listener = fresh.get(name) ?? this.listeners.get(name)!;
      const old = listener.chains;
      listener.chains = b.chains;
      closeChains(old);
      next.set(name, listener);
    }
    for (const [name, l] of this.listeners) {
      if (next.get(name) !== l) {
        closeChains(l.chains);
        await closeServer(l);
      }
    }
    this.listeners = next;
  }

  /** RDS route configurations the current listeners need. */
  routeNames(): string[] {
    const names = new Set<string>();
    for (const l of this.listeners.values()) {
      for (const c of [...l.chains.chains, ...(l.chains.fallback ? [l.chains.fallback] : [])]) {
        const n = c.routeConfigName();
        if (n !== undefined) names.add(n);
      }
    }
    return [...names].sort();
  }

  /** Downstream connections open on every listener. */
  activeConnections(): number {
    let n = 0;
    for (const l of this.listeners.values()) n += l.active;
    return n;
  }

  /** `name → address:port` of the bound listeners. */
  bound(): Record<string, string> {
    return Object.fromEntries([...this.listeners].map(([n, l]) => [n, `${l.address}:${(l.server.address() as net.AddressInfo).port}`]));
  }

  /** Stops listening and cuts the connections still open (the agent drained before this). */
  async stop(): Promise<void> {
    for (const l of this.listeners.values()) {
      closeChains(l.chains);
      const closed = closeServer(l);
      for (const socket of l.open) socket.destroy();
      await closed;
    }
    this.listeners.clear();
  }
}

/** A listener's chains, all built (or none: the error names the listener). */
export function buildChains(name: string, config: Decoded, deps: ChainDependencies): Chains {
  const chains: FilterChain[] = [];
  try {
    for (const c of (config.filter_chains ?? []) as Decoded[]) chains.push(new FilterChain(c, deps));
    const fallback = config.default_filter_chain ? new FilterChain(config.default_filter_chain, deps) : undefined;
    if (chains.length === 0 && !fallback) throw new Error('it has no filter chains');
    return { chains, fallback, inspectsTransport: [...chains, ...(fallback ? [fallback] : [])].some((c) => c.inspectsTransport) };
  } catch (e) {
    closeChains({ chains });
    throw new Error(`listener ${name}: ${e instanceof Error ? e.message : String(e)}`);
  }
}

/** The chain a connection is handed to: Envoy's selection, else the default chain. */
export function chainFor(c: Chains, info: ConnectionInfo): FilterChain | undefined {
  return selectChain(c.chains, info) ?? c.fallback;
}

export function closeChains(c: Chains): void {
  for (const chain of c.chains) chain.close();
  c.fallback?.close();
}

function listen(address: string, port: number, name: string): Promise<net.Server> {
  return new Promise((resolve, reject) => {
    const server = net.createServer({ noDelay: true });
    server.once('error', (e) => reject(new Error(`listener ${name}: cannot bind ${address}:${port}: ${e.message}`)));
    server.listen({ host: address, port }, () => resolve(server));
  });
}

function closeServer(l: BoundListener): Promise<void> {
  return new Promise((resolve) => l.server.close(() => resolve()));
}

function plain(address: string | undefined): string {
  return (address ?? '').replace(/^::ffff:/, '');
}
