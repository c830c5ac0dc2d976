export { OrchServiceRegistry, OrchRegistryOptions, OrchRegistryOptionsToken } from './registry';
export { OrchRegistryMetrics } from './metrics';
export { portProtocol } from './ports';
export { CLUSTER_LABEL, EXPORT_TO_ANNOTATION, localityOf, NETWORK_LABEL, serviceHost, SUBZONE_LABEL } from './convert';
export { MulticlusterMetrics } from './multicluster-metrics';
export { MulticlusterRegistry } from './multicluster-registry';
export { ClusterDebugInfo, RemoteClusterController, RemoteClustersOptions, RemoteClustersOptionsToken } from './remote-clusters';
export { allowedInsecureOptions, insecureOptionsOf, MULTICLUSTER_SECRET_LABEL, remoteClustersOf } from './remote-secret';
