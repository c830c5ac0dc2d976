export * from './model';
export { buildRegistry, ServiceRegistrySnapshot } from './build';
