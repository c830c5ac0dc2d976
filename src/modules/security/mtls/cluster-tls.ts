/**
 * The client side of TLS on an outbound cluster: the DestinationRule's TLS settings for it
 * (port- and subset-level merged by the caller), else auto mTLS.
 */
import { ClientTLSSettings } from '../../config/kinds/destination-rule';
import { PushContext } from '../../model/push-context';
import { Service, ServiceEndpoint, ServicePort } from '../../registry/model';
import { jsonToStruct } from '../../envoy/struct';
import { endpointTlsMode, MESH_TLS_MODE, serviceIdentities } from './identity';
import { ResolvedMtlsOptions } from './options';
import { namespaceMtlsMode } from './peer-authentication';
import {
  CertificateSource, exactMatchers, MESH_ALPN, meshUpstreamTlsContext, rawBufferTransportSocket, sdsSecret, tlsParams,
  tlsTransportSocket, UPSTREAM_TLS_CONTEXT_TYPE,
} from './tls-context';

type Obj = Record<string, unknown>;

/** Metadata key of endpoints and transport socket matches (Envoy's). */
export const TRANSPORT_SOCKET_MATCH_KEY = 'envoy.transport_socket_match';
/** SDS name prefixes of certificates read from files by the agent (the incumbent's). */
export const FILE_CERT_PREFIX = 'file-cert:';
export const FILE_ROOT_PREFIX = 'file-root:';
/** The `caCertificates` standing for the operating system's roots. */
export const SYSTEM_ROOTS = 'system';
/** Suffix of the SDS secret holding the CA certificates of a `credentialName`. */
export const CREDENTIAL_CA_SUFFIX = '-cacert';

export interface ClusterTlsTarget {
  push: PushContext;
  service: Service;
  port: ServicePort;
  subset: string;
  /** The cluster's endpoints (of its subset). */
  endpoints: readonly ServiceEndpoint[];
  /** The DestinationRule's TLS settings for this cluster, after port and subset merging. */
  tls?: ClientTLSSettings;
  /** The cluster speaks HTTP/2 upstream. */
  http2: boolean;
}

/** `outbound_.<port>_.<subset>_.<host>`: the SNI of mesh mTLS toward a cluster (the incumbent's). */
export function meshSni(port: number, subset: string, host: string): string {
  return `outbound_.${port}_.${subset}_.${host}`;
}

/**
 * Sets `transport_socket` (DestinationRule TLS, or auto mTLS for proxyless gRPC) or
 * `transport_socket_matches` (auto mTLS for proxies: mTLS to endpoints labelled
 * `tlsMode: mesh`, plain text to the others) on `cluster`.
 *
 * Proxyless gRPC has no transport socket matches, so its auto mTLS is one decision per cluster:
 * mTLS when every endpoint announces it. It can use the mesh's certificates only (its
 * bootstrap's certificate provider), so SIMPLE and MUTUAL with files or credentials are left
 * out for it, as the incumbent does.
 */
export function applyClusterTls(cluster: Obj, target: ClusterTlsTarget, options: ResolvedMtlsOptions, source: CertificateSource): void {
  const { tls } = target;
  if (tls) {
    if (tls.mode === 'DISABLE') return;
    if (tls.mode === 'MESH_MUTUAL') {
      cluster.transport_socket = tlsTransportSocket(meshClientContext(target, options, source, tls));
      return;
    }
    if (source === 'sds') cluster.transport_socket = tlsTransportSocket(userClientContext(target, tls, options));
    return;
  }
  if (!autoMtlsApplies(target, options)) return;
  const context = meshClientContext(target, options, source, undefined);
  if (source === 'certificate-provider') {
    const all = target.endpoints.length > 0 && target.endpoints.every((ep) => endpointTlsMode(ep.labels) === MESH_TLS_MODE);
    if (all) cluster.transport_socket = tlsTransportSocket(context);
    return;
  }
  cluster.transport_socket_matches = [
    { name: `tlsMode-${MESH_TLS_MODE}`, match: jsonToStruct({ tlsMode: MESH_TLS_MODE }), transport_socket: tlsTransportSocket(context) },
    { name: 'tlsMode-disabled', match: jsonToStruct({}), transport_socket: rawBufferTransportSocket() },
  ];
}

/** Auto mTLS: on, the destination is in the mesh, and its namespace does not turn mTLS off. */
function autoMtlsApplies(target: ClusterTlsTarget, options: ResolvedMtlsOptions): boolean {
  if (!options.enableAutoMtls || target.service.location !== 'MESH_INTERNAL') return false;
  return namespaceMtlsMode(target.push, target.service.namespace) !== 'DISABLE';
}

function meshClientContext(target: ClusterTlsTarget, options: ResolvedMtlsOptions, source: CertificateSource, tls: ClientTLSSettings | undefined): Obj {
  const subjectAltNames = tls?.subjectAltNames?.length ? tls.subjectAltNames : serviceIdentities(target.push, target.service, options.trustDomain);
  if (source === 'certificate-provider') return meshUpstreamTlsContext(source, { subjectAltNames });
  const alpn = [...options.leadingAlpns, MESH_ALPN, ...(target.http2 ? ['h2'] : [])];
  const sni = tls?.sni || meshSni(target.port.number, target.subset, target.service.hostname);
  return meshUpstreamTlsContext(source, { sni, alpn, subjectAltNames });
}

/**
 * SIMPLE and MUTUAL: the client certificate (MUTUAL) and the CA from the agent, by
 * `credentialName` or by file (`file-cert:<cert>~<key>`, `file-root:<ca>`; the operating
 * system's roots when no CA is given), validated against the rule's `subjectAltNames` or else
 * the service's identities; no validation with `insecureSkipVerify`.
 */
function userClientContext(target: ClusterTlsTarget, tls: ClientTLSSettings, options: ResolvedMtlsOptions): Obj {
  const common: Obj = { tls_params: tlsParams() };
  if (target.http2) common.alpn_protocols = ['h2'];
  if (tls.mode === 'MUTUAL') {
    const identity = tls.credentialName || `${FILE_CERT_PREFIX}${tls.clientCertificate}~${tls.privateKey}`;
    common.tls_certificate_sds_secret_configs = [sdsSecret(identity)];
  }
  if (tls.insecureSkipVerify) {
    common.validation_context = {};
  } else {
    const roots = tls.credentialName ? `${tls.credentialName}${CREDENTIAL_CA_SUFFIX}` : `${FILE_ROOT_PREFIX}${tls.caCertificates || SYSTEM_ROOTS}`;
    const sans = tls.subjectAltNames?.length ? tls.subjectAltNames : serviceIdentities(target.push, target.service, options.trustDomain);
    common.combined_validation_context = {
      default_validation_context: sans.length ? { match_subject_alt_names: exactMatchers(sans) } : {},
      validation_context_sds_secret_config: sdsSecret(roots),
    };
  }
  const context: Obj = { '@type': UPSTREAM_TLS_CONTEXT_TYPE, common_tls_context: common };
  if (tls.sni) context.sni = tls.sni;
  return context;
}
