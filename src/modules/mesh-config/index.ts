/**
 * The mesh config (`--meshConfig`, the orchestrator `mesh` ConfigMap) and the mesh networks
 * (`--networksConfig`): parsed, checked, layered, watched, and read live by everything downstream.
 */
export { MeshConfig, MeshConfigFileToken, MeshConfigLayerName, MeshConfigPollMsToken, MeshNetworks, MeshNetworksFileToken } from './mesh-config';
export { FieldReader, MeshConfigError } from './fields';
export { MeshConfigLayer, mergeMeshConfig, MESH_CONFIG_MAX_BYTES, parseMeshConfig, parseMeshConfigLayer, parseProxyConfig } from './parse';
export { readMeshConfigFile } from './read';
export {
  CaCertificate,
  DEFAULT_MESH_CONFIG,
  DEFAULT_PATH_NORMALIZATION,
  DefaultProviders,
  LabelSelector,
  LocalityLbSetting,
  MeshConfigValues,
  OutboundTrafficMode,
  PATH_NORMALIZATION_MODES,
  PathNormalizationMode,
} from './values';
export {
  applyProxyConfig,
  ControlPlaneAuthPolicy,
  DEFAULT_PROXY_CONFIG,
  InterceptionMode,
  mergeProxyConfig,
  parseProxyConfigPatch,
  ProxyConfig,
  ProxyConfigPatch,
  ProxyTracing,
} from './proxy-config';
export { ExtAuthzGrpcProvider, ExtAuthzHttpProvider, ExtensionProvider } from './extension-providers';
export { DEFAULT_MESH_NETWORKS, MeshNetwork, MeshNetworksValues, NetworkAssignment, NetworkEndpoint, NetworkGateway, parseMeshNetworks } from './networks';
export { meshConfigModule } from './module';
