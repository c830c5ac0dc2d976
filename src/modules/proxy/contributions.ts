/**
 * The built-in proxy's contribution points (DESIGN.md §4): the filters it can run, each a
 * factory keyed by the type URL of the typed_config it accepts. The proxy's core and the
 * enabled plugins contribute them; a filter no factory knows fails the listener (NACK)
 * unless it is optional.
 */
import type { HttpFilterFactory, NetworkFilterFactory } from './http/filter-api';
import type { TransportSocketFactory } from './tls/transport-sockets';

/** Contribution point: creates a built-in proxy HTTP filter from its typed_config. */
export const ProxyHttpFilterFactory = Symbol.for('mesh.proxy.HttpFilterFactory');
export type ProxyHttpFilterFactory = HttpFilterFactory;

/** Contribution point: creates a built-in proxy network filter (before tcp_proxy or the HCM) from its typed_config. */
export const ProxyNetworkFilterFactory = Symbol.for('mesh.proxy.NetworkFilterFactory');
export type ProxyNetworkFilterFactory = NetworkFilterFactory;

/**
 * Contribution point: a transport socket (inbound, toward clusters, or both) from its
 * typed_config; the core contributes Envoy's TLS, `raw_buffer` is plain text.
 */
export const ProxyTransportSocketFactory = Symbol.for('mesh.proxy.TransportSocketFactory');
export type ProxyTransportSocketFactory = TransportSocketFactory;
