/**
 * Mesh mutual TLS in generated config: which mode PeerAuthentication sets for a workload port,
 * the TLS contexts of both sides (SDS for proxies, certificate providers for proxyless gRPC),
 * the client-side decision per cluster (DestinationRule TLS, auto mTLS) and the endpoint
 * metadata auto mTLS selects by.
 */
export {
  DEFAULT_MTLS_MODE, EffectiveMtlsMode, namespaceMtlsMode, workloadMtls, WorkloadMtls, workloadPortMtlsMode,
} from './peer-authentication';
export {
  clientTlsFacts, DEFAULT_TRUST_DOMAIN, DISABLED_TLS_MODE, endpointTlsMode, MESH_TLS_MODE, serviceIdentities, spiffeId, TLS_MODE_LABEL,
} from './identity';
export { MtlsOptions, mtlsOptionsKey, MtlsOptionsToken, ResolvedMtlsOptions, resolveMtlsOptions } from './options';
export {
  applyClusterTls, ClusterTlsTarget, CREDENTIAL_CA_SUFFIX, FILE_CERT_PREFIX, FILE_ROOT_PREFIX, meshSni, SYSTEM_ROOTS, TRANSPORT_SOCKET_MATCH_KEY,
} from './cluster-tls';
export { TlsModeEndpointMetadata } from './endpoint-metadata';
export { MeshTlsAlpnContributor } from './alpn';
export * from './tls-context';
