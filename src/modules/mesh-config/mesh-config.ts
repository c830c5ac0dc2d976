import { inject, injectable, optional } from 'inversify';
import { readMeshConfigFile } from './read';
import { DEFAULT_MESH_CONFIG, MeshConfigValues, PathNormalizationMode } from './values';

/**
 * The mesh config file of the running command (`--meshConfig`), bound in its scope. Not bound
 * (a program or test that reads no file): the defaults.
 */
export const MeshConfigFileToken = Symbol.for('mesh.MeshConfigFile');

/**
 * The mesh config values everything downstream reads (trust domain, root namespace, auto mTLS,
 * path normalization), read once when first needed; a bad file stops start-up (MeshConfigError).
 */
@injectable()
export class MeshConfig implements MeshConfigValues {
  readonly trustDomain: string;
  readonly trustDomainAliases: readonly string[];
  readonly rootNamespace: string;
  readonly enableAutoMtls: boolean;
  readonly pathNormalization: PathNormalizationMode;

  constructor(@inject(MeshConfigFileToken) @optional() file?: string) {
    const values = file === undefined ? DEFAULT_MESH_CONFIG : readMeshConfigFile(file);
    this.trustDomain = values.trustDomain;
    this.trustDomainAliases = Object.freeze([...values.trustDomainAliases]);
    this.rootNamespace = values.rootNamespace;
    this.enableAutoMtls = values.enableAutoMtls;
    this.pathNormalization = values.pathNormalization;
  }
}
