import { DEFAULT_TRUST_DOMAIN } from './identity';
import { MeshTlsVersion, PEER_EXCHANGE_ALPN } from './tls-context';

/** The mesh's mTLS options for the generators (mesh config and settings); bound by the security module. */
export const MtlsOptionsToken = Symbol.for('mesh.MtlsOptions');

/** How generated config does mesh mutual TLS. */
export interface MtlsOptions {
  /** Trust domain of workload identities; `cluster.local` when not given. */
  trustDomain?: string;
  /**
   * Mesh config `enableAutoMtls` (default true): without DestinationRule TLS settings, clients use
   * mesh mTLS toward workloads that announce it (TLS_MODE_LABEL) unless their namespace's
   * PeerAuthentication is DISABLE.
   */
  enableAutoMtls?: boolean;
  /**
   * ALPN protocols offered ahead of the mesh's own on mesh mTLS, from the MeshTlsAlpnContributor
   * plugins; default `mesh-peer-exchange`, what metadata exchange offers when on.
   */
  leadingAlpns?: readonly string[];
  /** Mesh config `meshMTLS.minProtocolVersion` of inbound mesh mTLS (TLS_AUTO = TLSV1_2, the default). */
  minProtocolVersion?: MeshTlsVersion;
}

export type ResolvedMtlsOptions = Required<MtlsOptions>;

export function resolveMtlsOptions(options: MtlsOptions = {}): ResolvedMtlsOptions {
  const trustDomain = options.trustDomain ?? DEFAULT_TRUST_DOMAIN;
  if (trustDomain === '') throw new Error('mTLS options: the trust domain must not be empty');
  return {
    trustDomain,
    enableAutoMtls: options.enableAutoMtls ?? true,
    leadingAlpns: options.leadingAlpns ?? [PEER_EXCHANGE_ALPN],
    minProtocolVersion: options.minProtocolVersion ?? 'TLSV1_2',
  };
}

/** Memo-key fragment of everything the options change in generated config. */
export function mtlsOptionsKey(options: ResolvedMtlsOptions): string {
  return `${options.trustDomain}|${options.enableAutoMtls ? 'auto' : 'manual'}|${options.leadingAlpns.join(',')}|${options.minProtocolVersion}`;
}
