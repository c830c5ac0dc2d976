import { MtlsOptions, ResolvedMtlsOptions } from '../../security/mtls';
import { encodeResource } from '../../model/body-interning';
import {
  ClusterContributor, EndpointContributor, HttpConnectionManagerContributor, HttpFilterContributor, NetworkFilterContributor, XdsResource,
} from '../../model/generator';
import { PathNormalizationMode } from './path-normalization';

/** Bound by the generators module: the enabled contributions, settings and mesh config. */
export const SidecarGeneratorOptionsToken = Symbol.for('mesh.SidecarGeneratorOptions');

/** What the sidecar generator is built with (the container passes the bound contributors). */
export interface SidecarGeneratorOptions {
  networkFilters: readonly NetworkFilterContributor[];
  httpFilters: readonly HttpFilterContributor[];
  clusters: readonly ClusterContributor[];
  endpoints: readonly EndpointContributor[];
  /** Applied to every HTTP connection manager, after its filters are set. */
  connectionManagers: readonly HttpConnectionManagerContributor[];
  /** Virtual hosts also answer to `<host>.` (PILOT_ENABLE_ABSOLUTE_FQDN_VHOST_DOMAIN, default true). */
  absoluteFqdnDomain: boolean;
  /** Mesh config `pathNormalization.normalization`: how every HTTP connection manager normalizes request paths (default BASE). */
  pathNormalization: PathNormalizationMode;
  /**
   * Mesh mutual TLS (PeerAuthentication on inbound chains, DestinationRule TLS and auto mTLS on
   * outbound clusters, the TLS mode of EDS endpoints). Absent: config carries no TLS at all.
   */
  mtls?: MtlsOptions;
}

/** Options with every contributor list present, and the prefix of this generator's memo keys. */
export interface SidecarContext extends Omit<SidecarGeneratorOptions, 'mtls' | 'pathNormalization'> {
  memoPrefix: string;
  /** The HCM fields of `pathNormalization`, checked once. */
  pathNormalizationFields: Record<string, unknown>;
  mtls?: ResolvedMtlsOptions;
}

/** Encodes named plain messages once; the result is what gets memoized and shared. */
export function encodeNamed(typeUrl: string, messages: readonly Record<string, unknown>[], nameField = 'name'): XdsResource[] {
  return messages.map((m) => {
    const name = String(m[nameField]);
    return { name, body: encodeResource(typeUrl, name, m) };
  });
}

/** Resources whose names were asked for (all of them for a wildcard request). */
export function pick(resources: readonly XdsResource[], names: readonly string[] | undefined): XdsResource[] {
  if (names === undefined) return [...resources];
  const wanted = new Set(names);
  return resources.filter((r) => wanted.has(r.name));
}
