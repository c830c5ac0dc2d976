/**
 * Contribution point: ALPN protocols a feature offers on mesh mutual TLS, ahead of the mesh's
 * own (`mesh`, `h2`...): on the TLS contexts of outbound clusters and of inbound non-HTTP
 * filter chains. Metadata exchange offers `mesh-peer-exchange`, which tells its peer to
 * expect the exchange.
 */
export const MeshTlsAlpnContributor = Symbol.for('mesh.MeshTlsAlpnContributor');
export interface MeshTlsAlpnContributor {
  readonly meshTlsAlpns: readonly string[];
}
