export * from './model';
export { buildRegistry, ServiceRegistrySnapshot } from './build';
export { REGISTRY_NAMES, RegistryOptionError, RegistryOptions, RegistryOptionsToken, ServiceRegistries } from './registries';
export { registryModule } from './module';
