/**
 * How an inbound port's filter chain splits under its PeerAuthentication mode: STRICT takes only
 * mutual TLS, PERMISSIVE takes mutual TLS (told apart by the TLS inspector and the mesh ALPN)
 * and plain text (and, on TCP ports, TLS of the application's own, passed through), DISABLE
 * takes plain text only. Every variant carries the same filters; the mTLS one terminates TLS
 * with the workload's certificate from SDS and requires a client certificate from the mesh.
 */
import {
  EffectiveMtlsMode, HTTP_ALPNS, MESH_MTLS_ALPNS, meshDownstreamTlsContext, ResolvedMtlsOptions, tlsTransportSocket,
} from '../../security/mtls';
import { TLS_INSPECTOR_FILTER, TLS_INSPECTOR_TYPE } from '../../envoy/well-known';
export { TLS_INSPECTOR_FILTER, TLS_INSPECTOR_TYPE } from '../../envoy/well-known';

type Obj = Record<string, unknown>;


export interface InboundChainVariant {
  /** Appended to the chain's name: `-mtls`, `-tls`, or nothing for plain text. */
  nameSuffix: string;
  /** `filter_chain_match` fields of the variant (none for plain text without mTLS). */
  match: Obj;
  transportSocket?: Obj;
}

/** The variants of one inbound port's chain; `mode` undefined when mTLS is not generated at all. */
export function inboundChainVariants(mode: EffectiveMtlsMode | undefined, http: boolean, options: ResolvedMtlsOptions | undefined): InboundChainVariant[] {
  if (!mode || !options || mode === 'DISABLE') return [{ nameSuffix: '', match: {} }];
  const alpn = http ? HTTP_ALPNS : [...options.leadingAlpns, ...HTTP_ALPNS];
  const transportSocket = tlsTransportSocket(meshDownstreamTlsContext('sds', alpn, options.minProtocolVersion));
  if (mode === 'STRICT') return [{ nameSuffix: '-mtls', match: { transport_protocol: 'tls' }, transportSocket }];
  return [
    { nameSuffix: '-mtls', match: { transport_protocol: 'tls', application_protocols: [...MESH_MTLS_ALPNS] }, transportSocket },
    // A TCP port may carry the application's own TLS: it passes through untouched.
    ...(http ? [] : [{ nameSuffix: '-tls', match: { transport_protocol: 'tls' } }]),
    { nameSuffix: '', match: { transport_protocol: 'raw_buffer' } },
  ];
}

/** Whether any variant needs the TLS inspector to set the transport protocol and ALPN it matches on. */
export function needsTlsInspector(variants: readonly InboundChainVariant[]): boolean {
  return variants.some((v) => v.match.transport_protocol !== undefined);
}

export function tlsInspector(): Obj {
  return { name: TLS_INSPECTOR_FILTER, typed_config: { '@type': TLS_INSPECTOR_TYPE } };
}
