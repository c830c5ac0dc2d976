/**
 * The part of the mesh config (the incumbent's MeshConfig, same field names) the daemon acts
 * on so far; the rest of the file is read in a later issue.
 */

/** `pathNormalization.normalization`: how proxies normalize request paths before RBAC and routing. */
export const PATH_NORMALIZATION_MODES = ['NONE', 'BASE', 'DEFAULT', 'MERGE_SLASHES', 'DECODE_AND_MERGE_SLASHES'] as const;
export type PathNormalizationMode = (typeof PATH_NORMALIZATION_MODES)[number];
export const DEFAULT_PATH_NORMALIZATION: PathNormalizationMode = 'BASE';

export interface MeshConfigValues {
  /** The mesh's SPIFFE trust domain (`spiffe://<trustDomain>/ns/<ns>/sa/<sa>`). */
  readonly trustDomain: string;
  /** Former or other trust domains whose identities count as the trust domain's. */
  readonly trustDomainAliases: readonly string[];
  /** Where mesh-wide policies live (a policy there with no selector applies to every workload). */
  readonly rootNamespace: string;
  /** Clients use mutual TLS towards endpoints that accept it, without a DestinationRule saying so. */
  readonly enableAutoMtls: boolean;
  readonly pathNormalization: PathNormalizationMode;
}

export const DEFAULT_MESH_CONFIG: MeshConfigValues = Object.freeze({
  trustDomain: 'cluster.local',
  trustDomainAliases: Object.freeze([]) as readonly string[],
  rootNamespace: 'mesh-system',
  enableAutoMtls: true,
  pathNormalization: DEFAULT_PATH_NORMALIZATION,
});
