/**
 * Listeners built as the proxy builds them, never bound: a connection and its request are
 * evaluated in-process by the chain the proxy would pick, with the same filters (Envoy's
 * listener and chain selection, network filters, the connection manager up to routing).
 * `meshctl x authz simulate` asks it "what would the proxy do with this request?".
 */
import type { ConnectionInfo, FilterReport } from '../http/filter-api';
import type { Decoded } from '../xds/xds-client';
import { ChainDependencies, ChainVerdict } from './filter-chain';
import { buildChains, chainFor, Chains, closeChains } from './listener-manager';

const ORIGINAL_DST = 'envoy.filters.listener.original_dst';
const ANY_ADDRESSES = ['0.0.0.0', '::'];

interface ProbeListener {
  readonly name: string;
  readonly address: string;
  readonly port: number;
  /** Takes captured connections with their original destination (virtualInbound). */
  readonly capture: boolean;
  readonly chains: Chains;
}

/** A request as a client sends it; `target` is the request line's target (path and query). */
export interface ProbeRequest {
  method: string;
  target: string;
  /** Lower-case names; repeated headers joined with `,`. */
  headers: Record<string, string>;
}

export type ProbeVerdict = ChainVerdict | { kind: 'no-listener' } | { kind: 'no-chain' } | { kind: 'handshake'; why: string };

export interface ProbeResult {
  listener?: string;
  chain?: string;
  verdict: ProbeVerdict;
  /** What the deciding filters reported, in the order they ran. */
  trace: FilterReport[];
}

export class ListenerProbe {
  private readonly listeners: ProbeListener[] = [];

  constructor(configs: readonly Decoded[], deps: ChainDependencies) {
    try {
      for (const config of configs) {
        const socket = config.address?.socket_address;
        if (config.bind_to_port?.value === false || !socket?.address) continue;
        const name = String(config.name ?? '');
        const capture = ((config.listener_filters ?? []) as Decoded[]).some((f) => f.name === ORIGINAL_DST);
        this.listeners.push({ name, address: String(socket.address), port: Number(socket.port_value ?? 0), capture, chains: buildChains(name, config, deps) });
      }
    } catch (err) {
      this.close();
      throw err;
    }
  }

  /**
   * `connection.localAddress:localPort` is where the client connects (the original destination
   * of a captured connection); `transportProtocol: 'tls'` with a `peerPrincipal` is a mutual
   * TLS client with that identity.
   */
  async evaluate(connection: ConnectionInfo, request: ProbeRequest): Promise<ProbeResult> {
    const listener = this.listenerFor(connection);
    const trace: FilterReport[] = [];
    if (!listener) return { verdict: { kind: 'no-listener' }, trace };
    const chain = chainFor(listener.chains, connection);
    if (!chain) return { listener: listener.name, verdict: { kind: 'no-chain' }, trace };
    const chainName = chain.config.name === undefined ? undefined : String(chain.config.name);
    if (chain.terminatesTls && connection.peerPrincipal === undefined) {
      return { listener: listener.name, chain: chainName, verdict: { kind: 'handshake', why: 'the chain requires a client certificate of the mesh' }, trace };
    }
    // A chain that does not terminate TLS sees no peer certificate.
    const info = chain.terminatesTls ? connection : { ...connection, peerPrincipal: undefined };
    const verdict = await chain.evaluate(info, { ...request, trace });
    return { listener: listener.name, chain: chainName, verdict, trace };
  }

  close(): void {
    for (const l of this.listeners) closeChains(l.chains);
  }

  /** The listener bound at the address, else a wildcard one on the port, else the capture listener. */
  private listenerFor(c: ConnectionInfo): ProbeListener | undefined {
    return (
      this.listeners.find((l) => l.address === c.localAddress && l.port === c.localPort) ??
      this.listeners.find((l) => ANY_ADDRESSES.includes(l.address) && l.port === c.localPort && !l.capture) ??
      this.listeners.find((l) => l.capture)
    );
  }
}
