export * from './model';
export { buildRegistry, RegistryBuilder, PlatformInput, ServiceRegistrySnapshot } from './build';
export { EMPTY_PLATFORM_SNAPSHOT, PlatformRegistry, PlatformRegistryEvent, PlatformRegistrySnapshot, PlatformService } from './platform';
export { REGISTRY_NAMES, RegistryOptionError, RegistryOptions, RegistryOptionsToken, ServiceRegistries } from './registries';
export { registryModule } from './module';
export {
  allowedInsecureOptions,
  ClusterDebugInfo,
  MulticlusterMetrics,
  MULTICLUSTER_SECRET_LABEL,
  MulticlusterRegistry,
  OrchRegistryMetrics,
  OrchRegistryOptions,
  OrchRegistryOptionsToken,
  OrchServiceRegistry,
  portProtocol,
  RemoteClusterController,
  RemoteClustersOptions,
  RemoteClustersOptionsToken,
} from './orch';
