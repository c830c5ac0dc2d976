/**
 * One filter chain of a listener, built from its config: network filters (e.g. network RBAC)
 * followed by the terminal filter, an HTTP connection manager or a TCP proxy.
 */
import type { Socket } from 'node:net';
import { ConnectionInfo, FilterContext, NetworkFilter } from '../http/filter-api';
import { FilterRegistry, HCM_TYPE, TCP_PROXY_TYPE } from '../http/filter-registry';
import { HttpConnectionManager, RouteTables } from '../http/connection-manager';
import { Router } from '../http/router';
import { TcpProxy } from '../tcp/tcp-proxy';
import { ClusterManager } from '../upstream/cluster-manager';
import type { Decoded } from '../xds/ads-client';

export interface ChainDependencies {
  registry: FilterRegistry;
  context: FilterContext;
  routes: RouteTables;
  router: Router;
  clusters: ClusterManager;
}

export class FilterChain {
  private readonly networkFilters: NetworkFilter[] = [];
  private readonly terminal: HttpConnectionManager | TcpProxy;

  constructor(
    readonly config: Decoded,
    deps: ChainDependencies,
  ) {
    if (config.transport_socket) throw new Error(`filter chain ${config.name ?? ''}: TLS transport sockets are not supported by the built-in proxy yet`);
    const filters = (config.filters ?? []) as Decoded[];
    if (filters.length === 0) throw new Error(`filter chain ${config.name ?? ''} has no filters`);
    let terminal: HttpConnectionManager | TcpProxy | undefined;
    filters.forEach((f, i) => {
      const typeUrl = String(f.typed_config?.['@type'] ?? '');
      const last = i === filters.length - 1;
      if (typeUrl === HCM_TYPE || typeUrl === TCP_PROXY_TYPE) {
        if (!last) throw new Error(`network filter ${f.name} must be the last of its chain`);
        terminal = typeUrl === HCM_TYPE ? new HttpConnectionManager(f.typed_config, deps.registry, deps.context, deps.routes, deps.router) : new TcpProxy(f.typed_config, deps.clusters);
        return;
      }
      const filter = deps.registry.networkFilter(f, deps.context);
      if (filter) this.networkFilters.push(filter);
    });
    if (!terminal) throw new Error(`filter chain ${config.name ?? ''} does not end in http_connection_manager or tcp_proxy`);
    this.terminal = terminal;
  }

  /** RDS names the chain's connection manager needs. */
  routeConfigName(): string | undefined {
    return this.terminal instanceof HttpConnectionManager ? this.terminal.routeConfigName : undefined;
  }

  accept(socket: Socket, info: ConnectionInfo): void {
    for (const f of this.networkFilters) {
      if (f.onConnection(info) === 'close') {
        socket.destroy();
        return;
      }
    }
    if (this.terminal instanceof HttpConnectionManager) this.terminal.accept(socket, info);
    else this.terminal.accept(socket);
  }

  close(): void {
    for (const f of this.networkFilters) f.close?.();
    if (this.terminal instanceof HttpConnectionManager) this.terminal.close();
  }

  /** Whether the chain's filter_chain_match accepts this connection. */
  matches(info: ConnectionInfo): boolean {
    const m = this.config.filter_chain_match as Decoded | undefined;
    if (!m) return true;
    if (m.destination_port?.value !== undefined && Number(m.destination_port.value) !== info.localPort) return false;
    if (m.prefix_ranges?.length && !(m.prefix_ranges as Decoded[]).some((r) => inRange(info.localAddress, r))) return false;
    if (m.source_prefix_ranges?.length && !(m.source_prefix_ranges as Decoded[]).some((r) => inRange(info.remoteAddress, r))) return false;
    if (m.transport_protocol && m.transport_protocol !== 'raw_buffer') return false;
    if (m.server_names?.length) return false;
    return true;
  }
}

function inRange(address: string, range: Decoded): boolean {
  const prefix = String(range.address_prefix);
  const bits = Number(range.prefix_len?.value ?? (prefix.includes(':') ? 128 : 32));
  const a = ipv4ToInt(address.replace(/^::ffff:/, ''));
  const p = ipv4ToInt(prefix);
  if (a === undefined || p === undefined) return address === prefix;
  if (bits === 0) return true;
  const mask = bits >= 32 ? 0xffffffff : (~((1 << (32 - bits)) - 1)) >>> 0;
  return ((a & mask) >>> 0) === ((p & mask) >>> 0);
}

function ipv4ToInt(ip: string): number | undefined {
  const parts = ip.split('.');
  if (parts.length !== 4) return undefined;
  let n = 0;
  for (const part of parts) {
    const v = Number(part);
    if (!Number.isInteger(v) || v < 0 || v > 255) return undefined;
    n = n * 256 + v;
  }
  return n >>> 0;
}
