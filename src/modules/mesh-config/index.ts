/** The mesh config (`--meshConfig`): trust domain, root namespace, auto mTLS, path normalization. */
export { MeshConfig, MeshConfigFileToken } from './mesh-config';
export { MeshConfigError, parseMeshConfig, readMeshConfigFile } from './read';
export { DEFAULT_MESH_CONFIG, DEFAULT_PATH_NORMALIZATION, MeshConfigValues, PATH_NORMALIZATION_MODES, PathNormalizationMode } from './values';
export { meshConfigModule } from './module';
