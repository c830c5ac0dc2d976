/** Orchestrator kinds analysis understands besides the mesh's own (anything else is "unknown"). */
export const BUILTIN_KINDS: ReadonlySet<string> = new Set([
  'Namespace', 'Service', 'Pod', 'ConfigMap', 'Secret', 'Endpoints', 'EndpointSlice', 'Node', 'ServiceAccount',
  'Deployment', 'ReplicaSet', 'StatefulSet', 'DaemonSet', 'Job', 'CronJob', 'Ingress', 'IngressClass',
  'MutatingWebhookConfiguration', 'ValidatingWebhookConfiguration', 'CustomResourceDefinition',
  'Role', 'RoleBinding', 'ClusterRole', 'ClusterRoleBinding', 'NetworkPolicy', 'PodDisruptionBudget',
  'HorizontalPodAutoscaler', 'GatewayClass', 'HTTPRoute', 'GRPCRoute', 'TCPRoute', 'TLSRoute', 'ReferenceGrant',
  'MeshConfig', 'ProxyConfig', 'Telemetry', 'WasmPlugin', 'EnvoyFilter',
]);
