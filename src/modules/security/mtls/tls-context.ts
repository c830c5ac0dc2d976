/**
 * Envoy TLS transport sockets for mesh mutual TLS, in the two forms clients fetch certificates:
 * SDS from the workload's agent (Envoy and the built-in proxy: secrets `default` and `ROOTCA`),
 * and certificate-provider instances of the gRPC bootstrap (proxyless gRPC: instance `default`).
 */
import { DOWNSTREAM_TLS_CONTEXT_TYPE, RAW_BUFFER_TYPE, UPSTREAM_TLS_CONTEXT_TYPE } from '../../envoy/well-known';
export { DOWNSTREAM_TLS_CONTEXT_TYPE, RAW_BUFFER_TYPE, UPSTREAM_TLS_CONTEXT_TYPE } from '../../envoy/well-known';

type Obj = Record<string, unknown>;

export const TLS_TRANSPORT_SOCKET = 'envoy.transport_sockets.tls';
export const RAW_BUFFER_TRANSPORT_SOCKET = 'envoy.transport_sockets.raw_buffer';

/** SDS secret of the workload's certificate chain and key. */
export const SDS_DEFAULT_SECRET = 'default';
/** SDS secret of the mesh's root certificates (the validation context). */
export const SDS_ROOT_SECRET = 'ROOTCA';
/** The bootstrap cluster through which a proxy reaches its agent's SDS server. */
export const SDS_CLUSTER = 'sds-grpc';
/** Certificate-provider instance of a proxyless gRPC bootstrap, and the certificate names it serves. */
export const GRPC_CERTIFICATE_PROVIDER = 'default';
export const GRPC_IDENTITY_CERTIFICATE = 'default';
export const GRPC_ROOT_CERTIFICATE = 'ROOTCA';

/** ALPN of mesh mTLS: the metadata-exchange plugin's protocol, then the mesh's own. */
export const PEER_EXCHANGE_ALPN = 'mesh-peer-exchange';
export const MESH_ALPN = 'mesh';
/** Every ALPN a mesh client offers over mTLS (with and without the ALPN filter's per-protocol values). */
export const MESH_MTLS_ALPNS = [MESH_ALPN, PEER_EXCHANGE_ALPN, 'mesh-http/1.0', 'mesh-http/1.1', 'mesh-h2'];
/** ALPN an inbound HTTP listener answers with. */
export const HTTP_ALPNS = ['h2', 'http/1.1'];

/** TlsParameters.TlsProtocol numbers (the encoder takes enum numbers). */
const TLS_V1_2 = 3;
const TLS_V1_3 = 4;

/** Where a proxy's certificates come from. */
export type CertificateSource = 'sds' | 'certificate-provider';

/** An SdsSecretConfig fetching `name` from the agent over the `sds-grpc` bootstrap cluster. */
export function sdsSecret(name: string): Obj {
  return {
    name,
    sds_config: {
      api_config_source: {
        api_type: 2, // GRPC
        transport_api_version: 2, // V3
        grpc_services: [{ envoy_grpc: { cluster_name: SDS_CLUSTER } }],
        set_node_on_first_message_only: true,
      },
      resource_api_version: 2, // V3
    },
  };
}

/** `StringMatcher`s matching each name exactly. */
export function exactMatchers(names: readonly string[]): Obj[] {
  return names.map((exact) => ({ exact }));
}

/**
 * The common TLS context of mesh mTLS: the workload certificate, validation against the mesh
 * root, and (client side) the peer identities to accept. gRPC takes no `tls_params` and no
 * SDS, so its form names certificate-provider instances instead.
 */
export function meshCommonTlsContext(
  source: CertificateSource,
  options: { alpn?: readonly string[]; subjectAltNames?: readonly string[]; minProtocolVersion?: MeshTlsVersion } = {},
): Obj {
  const sans = options.subjectAltNames?.length ? { match_subject_alt_names: exactMatchers(options.subjectAltNames) } : {};
  if (source === 'certificate-provider') {
    return {
      tls_certificate_provider_instance: { instance_name: GRPC_CERTIFICATE_PROVIDER, certificate_name: GRPC_IDENTITY_CERTIFICATE },
      validation_context: {
        ca_certificate_provider_instance: { instance_name: GRPC_CERTIFICATE_PROVIDER, certificate_name: GRPC_ROOT_CERTIFICATE },
        ...sans,
      },
    };
  }
  const out: Obj = { tls_params: tlsParams(options.minProtocolVersion) };
  if (options.alpn?.length) out.alpn_protocols = [...options.alpn];
  out.tls_certificate_sds_secret_configs = [sdsSecret(SDS_DEFAULT_SECRET)];
  out.combined_validation_context = { default_validation_context: sans, validation_context_sds_secret_config: sdsSecret(SDS_ROOT_SECRET) };
  return out;
}

/** The lowest TLS version of mesh mTLS (mesh config `meshMTLS.minProtocolVersion`; TLS_AUTO is 1.2). */
export type MeshTlsVersion = 'TLSV1_2' | 'TLSV1_3';

export function tlsParams(minProtocolVersion: MeshTlsVersion = 'TLSV1_2'): Obj {
  return { tls_minimum_protocol_version: minProtocolVersion === 'TLSV1_3' ? TLS_V1_3 : TLS_V1_2, tls_maximum_protocol_version: TLS_V1_3 };
}

/** The server side of mesh mTLS: a client certificate is required, from `minProtocolVersion` on. */
export function meshDownstreamTlsContext(source: CertificateSource, alpn?: readonly string[], minProtocolVersion?: MeshTlsVersion): Obj {
  return {
    '@type': DOWNSTREAM_TLS_CONTEXT_TYPE,
    common_tls_context: meshCommonTlsContext(source, { alpn, minProtocolVersion }),
    require_client_certificate: { value: true },
  };
}

/** The client side of mesh mTLS toward a destination whose identities are `subjectAltNames` (any mesh identity when empty). */
export function meshUpstreamTlsContext(source: CertificateSource, options: { sni?: string; alpn?: readonly string[]; subjectAltNames?: readonly string[] }): Obj {
  const out: Obj = { '@type': UPSTREAM_TLS_CONTEXT_TYPE, common_tls_context: meshCommonTlsContext(source, options) };
  if (options.sni) out.sni = options.sni;
  return out;
}

/** A TLS transport socket carrying a Downstream- or UpstreamTlsContext. */
export function tlsTransportSocket(context: Obj): Obj {
  return { name: TLS_TRANSPORT_SOCKET, typed_config: context };
}

export function rawBufferTransportSocket(): Obj {
  return { name: RAW_BUFFER_TRANSPORT_SOCKET, typed_config: { '@type': RAW_BUFFER_TYPE } };
}
