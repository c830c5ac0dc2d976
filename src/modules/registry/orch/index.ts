export { OrchServiceRegistry, OrchRegistryOptions, OrchRegistryOptionsToken } from './registry';
export { OrchRegistryMetrics } from './metrics';
export { portProtocol } from './ports';
export { CLUSTER_LABEL, EXPORT_TO_ANNOTATION, localityOf, NETWORK_LABEL, serviceHost, SUBZONE_LABEL } from './convert';
