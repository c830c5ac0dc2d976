/**
 * The built-in proxy's transport sockets, by the type URL of their typed_config: the factories
 * the core (TLS) and plugins contribute (ProxyTransportSocketFactory). `raw_buffer`, or no
 * transport socket, is plain text. A type no factory knows for that direction fails the listener
 * or cluster update, naming it.
 */
import type * as net from 'node:net';
import type * as tls from 'node:tls';
import { RAW_BUFFER_TYPE } from '../../envoy/well-known';
import type { Decoded } from '../xds/xds-client';
import type { SecretStore } from './secrets';

/** An inbound filter chain's transport: completes its handshake on the accepted socket. */
export interface DownstreamTransport {
  /** The socket to read the stream from, and the peer's verified identity if it has one; rejects to close the connection. */
  accept(socket: net.Socket): Promise<{ socket: net.Socket; peerPrincipal?: string }>;
}

/** A cluster's transport toward its endpoints: TLS options for `tls.connect` and HTTPS agents. */
export interface UpstreamTransport {
  /** Undefined while what it needs (an SDS secret) has not arrived: the connection is refused meanwhile. */
  connectOptions(): tls.ConnectionOptions | undefined;
}

/** What a transport socket is built with. */
export interface TransportSocketContext {
  /** SDS secrets as they arrive; a transport asks for the names it uses with `want`. */
  secrets: SecretStore;
  /** Where the transport socket is, for error messages (`cluster x: transport_socket`). */
  field: string;
}

/** Builds a transport socket from its typed_config, for one or both directions; throws on config it cannot honour. */
export interface TransportSocketFactory {
  readonly typeUrl: string;
  downstream?(config: Decoded, context: TransportSocketContext): DownstreamTransport;
  upstream?(config: Decoded, context: TransportSocketContext): UpstreamTransport;
}

export class TransportSockets {
  private readonly factories = new Map<string, TransportSocketFactory>();

  constructor(
    factories: readonly TransportSocketFactory[],
    private readonly secrets: SecretStore,
  ) {
    for (const f of factories) this.factories.set(f.typeUrl, f);
  }

  downstream(socket: Decoded | undefined, field: string): DownstreamTransport | undefined {
    const found = this.find(socket, 'downstream', field);
    return found && found.factory.downstream!(found.config, { secrets: this.secrets, field });
  }

  upstream(socket: Decoded | undefined, field: string): UpstreamTransport | undefined {
    const found = this.find(socket, 'upstream', field);
    return found && found.factory.upstream!(found.config, { secrets: this.secrets, field });
  }

  private find(socket: Decoded | undefined, direction: 'downstream' | 'upstream', field: string): { factory: TransportSocketFactory; config: Decoded } | undefined {
    if (!socket) return undefined;
    const typeUrl = String(socket.typed_config?.['@type'] ?? '');
    if (typeUrl === RAW_BUFFER_TYPE || (!typeUrl && socket.name === 'envoy.transport_sockets.raw_buffer')) return undefined;
    const factory = this.factories.get(typeUrl);
    if (!factory?.[direction]) {
      const known = [...this.factories.values()].filter((f) => f[direction]).map((f) => f.typeUrl);
      throw new Error(`${field}: transport socket ${socket.name ?? ''} (${typeUrl || 'no typed_config'}) is not supported; expected ${known.join(' or ')}`);
    }
    return { factory, config: socket.typed_config };
  }
}
