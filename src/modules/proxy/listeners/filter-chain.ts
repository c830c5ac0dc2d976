/**
 * One filter chain of a listener, built from its config: network filters (e.g. network RBAC)
 * followed by the terminal filter, an HTTP connection manager or a TCP proxy.
 */
import type { Socket } from 'node:net';
import { ConnectionInfo, FilterContext, NetworkFilter } from '../http/filter-api';
import { FilterRegistry, HCM_TYPE, TCP_PROXY_TYPE } from '../http/filter-registry';
import { Admission, HttpConnectionManager, IncomingRequest, RouteTables } from '../http/connection-manager';

/** What a chain does with a connection and its request: closed by a network filter, passed on as TCP, or the connection manager's admission. */
export type ChainVerdict = { kind: 'closed'; by: string } | { kind: 'tcp' } | Admission;
import { PathRuntimeFlags } from '../http/path-normalization';
import { Router } from '../http/router';
import { TcpProxy } from '../tcp/tcp-proxy';
import { ClusterManager } from '../upstream/cluster-manager';
import type { Decoded } from '../xds/xds-client';
import { compileCidrRange } from '../filters/matchers/cidr';
import { DownstreamTransport, TransportSockets } from '../tls/transport-sockets';

export interface ChainDependencies {
  registry: FilterRegistry;
  context: FilterContext;
  routes: RouteTables;
  router: Router;
  clusters: ClusterManager;
  transports: TransportSockets;
  /** Path handling flags every HTTP connection manager of the proxy applies. */
  pathFlags: PathRuntimeFlags;
  log: (level: 'debug' | 'info' | 'warn', message: string) => void;
}

export class FilterChain {
  private readonly networkFilters: NetworkFilter[] = [];
  private readonly terminal: HttpConnectionManager | TcpProxy;
  private readonly log: ChainDependencies['log'];
  readonly criteria: ChainCriteria;
  private readonly tls: DownstreamTransport | undefined;
  /** Whether matching needs to know if the connection starts with a TLS handshake. */
  readonly inspectsTransport: boolean;

  constructor(
    readonly config: Decoded,
    deps: ChainDependencies,
  ) {
    this.criteria = compileChainMatch(config.filter_chain_match, `filter chain ${config.name ?? ''}: filter_chain_match`);
    this.tls = deps.transports.downstream(config.transport_socket, `filter chain ${config.name ?? ''}: transport_socket`);
    this.inspectsTransport = this.tls !== undefined || Boolean(config.filter_chain_match?.transport_protocol);
    this.log = deps.log;
    const filters = (config.filters ?? []) as Decoded[];
    if (filters.length === 0) throw new Error(`filter chain ${config.name ?? ''} has no filters`);
    let terminal: HttpConnectionManager | TcpProxy | undefined;
    filters.forEach((f, i) => {
      const typeUrl = String(f.typed_config?.['@type'] ?? '');
      const last = i === filters.length - 1;
      if (typeUrl === HCM_TYPE || typeUrl === TCP_PROXY_TYPE) {
        if (!last) throw new Error(`network filter ${f.name} must be the last of its chain`);
        terminal = typeUrl === HCM_TYPE ? new HttpConnectionManager(f.typed_config, deps.registry, deps.context, deps.routes, deps.router, deps.pathFlags) : new TcpProxy(f.typed_config, deps.clusters);
        return;
      }
      this.networkFilters.push(deps.registry.networkFilter(f, deps.context));
    });
    if (!terminal) throw new Error(`filter chain ${config.name ?? ''} does not end in http_connection_manager or tcp_proxy`);
    this.terminal = terminal;
  }

  /** RDS names the chain's connection manager needs. */
  routeConfigName(): string | undefined {
    return this.terminal instanceof HttpConnectionManager ? this.terminal.routeConfigName : undefined;
  }

  /**
   * Takes a connection. `first` is what the listener read to tell TLS from plain text; it is
   * given back to the stream at the point each consumer can still see it (Node's HTTP server
   * reads the socket's handle directly, so it must be attached before the bytes return).
   */
  accept(socket: Socket, info: ConnectionInfo, first?: Buffer): void {
    if (!this.tls) {
      this.serve(socket, info, first);
      return;
    }
    if (first) socket.unshift(first);
    this.tls.accept(socket).then(
      ({ socket: secure, peerPrincipal }) => this.serve(secure, { ...info, peerPrincipal }),
      (err: Error) => {
        this.log('debug', `TLS handshake from ${info.remoteAddress}:${info.remotePort} failed: ${err.message}`);
        socket.destroy();
      },
    );
  }

  /**
   * A request evaluated in-process on this chain, without a socket: the network filters on the
   * connection (as `serve` runs them), then the connection manager's `admit` up to routing. A
   * TCP chain passes the connection on (`tcp`). `meshctl x authz simulate` asks this.
   */
  async evaluate(info: ConnectionInfo, incoming: IncomingRequest): Promise<ChainVerdict> {
    for (const f of this.networkFilters) {
      if (f.onConnection(info, incoming.trace) === 'close') return { kind: 'closed', by: f.name };
    }
    if (this.terminal instanceof HttpConnectionManager) return this.terminal.admit(incoming, info);
    return { kind: 'tcp' };
  }

  /** Whether the chain terminates TLS (its peers present certificates). */
  get terminatesTls(): boolean {
    return this.tls !== undefined;
  }

  /** Network filters (which may read the peer identity), then the terminal filter. */
  private serve(socket: Socket, info: ConnectionInfo, first?: Buffer): void {
    for (const f of this.networkFilters) {
      if (f.onConnection(info) === 'close') {
        socket.destroy();
        return;
      }
    }
    if (this.terminal instanceof HttpConnectionManager) {
      this.terminal.accept(socket, info);
      if (first) {
        socket.unshift(first);
        socket.resume();
      }
    } else {
      if (first) socket.unshift(first);
      this.terminal.accept(socket);
    }
  }

  close(): void {
    for (const f of this.networkFilters) f.close?.();
    if (this.terminal instanceof HttpConnectionManager) this.terminal.close();
  }

}

/** A chain's filter_chain_match, compiled: what Envoy's staged chain selection reads. */
export interface ChainCriteria {
  port?: number;
  destinations: ((address: string) => boolean)[];
  transport?: 'tls' | 'raw_buffer';
  sources: ((address: string) => boolean)[];
  /** Server names never match: this proxy does not read SNI before choosing a chain. */
  sniOnly: boolean;
}

/**
 * filter_chain_match compiled once with the chain. Application protocols (ALPN) are not read
 * (a TLS chain naming the mesh's ALPN takes any TLS connection).
 */
function compileChainMatch(m: Decoded | undefined, field: string): ChainCriteria {
  if (!m) return { destinations: [], sources: [], sniOnly: false };
  const transport = m.transport_protocol ? String(m.transport_protocol) : undefined;
  if (transport !== undefined && transport !== 'tls' && transport !== 'raw_buffer') throw new Error(`${field}.transport_protocol: "${transport}" is not supported (tls or raw_buffer)`);
  return {
    port: m.destination_port?.value !== undefined ? Number(m.destination_port.value) : undefined,
    destinations: ((m.prefix_ranges ?? []) as Decoded[]).map((r, i) => compileCidrRange(r, `${field}.prefix_ranges[${i}]`)),
    transport,
    sources: ((m.source_prefix_ranges ?? []) as Decoded[]).map((r, i) => compileCidrRange(r, `${field}.source_prefix_ranges[${i}]`)),
    sniOnly: Boolean(m.server_names?.length),
  };
}

/**
 * Envoy's chain selection: criteria in order (destination port, destination address,
 * transport protocol, source address); at each, chains naming the connection's value win,
 * and only when none does are chains that leave the criterion open considered. So a
 * connection to a port with its own chains never falls back to a catch-all chain.
 */
export function selectChain(chains: readonly FilterChain[], info: ConnectionInfo): FilterChain | undefined {
  let candidates = chains.filter((c) => !c.criteria.sniOnly);
  const stage = (specific: (c: ChainCriteria) => boolean | undefined) => {
    const named = candidates.filter((c) => specific(c.criteria) === true);
    candidates = named.length > 0 ? named : candidates.filter((c) => specific(c.criteria) === undefined);
  };
  stage((c) => (c.port === undefined ? undefined : c.port === info.localPort));
  stage((c) => (c.destinations.length === 0 ? undefined : c.destinations.some((t) => t(info.localAddress))));
  stage((c) => (c.transport === undefined ? undefined : c.transport === (info.transportProtocol ?? 'raw_buffer')));
  stage((c) => (c.sources.length === 0 ? undefined : c.sources.some((t) => t(info.remoteAddress))));
  return candidates[0];
}
