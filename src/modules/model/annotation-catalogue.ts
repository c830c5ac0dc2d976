/**
 * The mesh's annotations: where each belongs and whether it is on its way out. `meshctl
 * analyze` checks annotations in the mesh's domains against this table; the injector
 * validates the values of the ones it reads.
 */

/** Kinds an annotation may sit on; `Any` puts no limit. */
export type AnnotationResource = 'Any' | 'Pod' | 'Service' | 'Namespace' | 'Ingress' | 'ServiceEntry' | 'WorkloadEntry' | 'AuthorizationPolicy' | 'Gateway';

export interface MeshAnnotation {
  readonly name: string;
  readonly resources: readonly AnnotationResource[];
  readonly deprecated?: { readonly extra: string };
  readonly description: string;
}

const pod = (name: string, description: string, deprecated?: { extra: string }): MeshAnnotation => ({ name, resources: ['Pod'], description, deprecated });

export const MESH_ANNOTATIONS: readonly MeshAnnotation[] = [
  pod('sidecar.mesh.io/inject', 'Whether the proxy is injected into the pod', { extra: ' in favor of the "sidecar.mesh.io/inject" label' }),
  pod('sidecar.mesh.io/status', 'Set by the injector: what it injected'),
  pod('sidecar.mesh.io/interceptionMode', 'How inbound traffic is captured: REDIRECT, TPROXY or NONE'),
  pod('sidecar.mesh.io/proxyImage', 'The proxy image to inject'),
  pod('sidecar.mesh.io/proxyImageType', 'The proxy image variant (debug, distroless)'),
  pod('sidecar.mesh.io/proxyCPU', 'CPU request of the proxy container'),
  pod('sidecar.mesh.io/proxyCPULimit', 'CPU limit of the proxy container'),
  pod('sidecar.mesh.io/proxyMemory', 'Memory request of the proxy container'),
  pod('sidecar.mesh.io/proxyMemoryLimit', 'Memory limit of the proxy container'),
  pod('sidecar.mesh.io/logLevel', 'Log level of the proxy'),
  pod('sidecar.mesh.io/componentLogLevel', 'Per-component log levels of the proxy'),
  pod('sidecar.mesh.io/agentLogLevel', 'Log levels of the agent'),
  pod('sidecar.mesh.io/enableCoreDump', 'Whether the proxy may write core dumps'),
  pod('sidecar.mesh.io/rewriteAppHTTPProbers', 'Whether HTTP probes are rewritten to go through the agent'),
  pod('sidecar.mesh.io/bootstrapOverride', 'A ConfigMap with a bootstrap override for the proxy'),
  pod('sidecar.mesh.io/discoveryAddress', 'The control-plane address the proxy connects to'),
  pod('sidecar.mesh.io/userVolume', 'Extra volumes for the proxy container (JSON)'),
  pod('sidecar.mesh.io/userVolumeMount', 'Extra volume mounts for the proxy container (JSON)'),
  pod('sidecar.mesh.io/nativeSidecar', 'Whether the proxy runs as a native sidecar (restartable init container)'),
  pod('sidecar.mesh.io/statsHistogramBuckets', 'Histogram buckets of the proxy statistics'),
  pod('sidecar.mesh.io/statsInclusionPrefixes', 'Extra proxy statistics by prefix', { extra: '' }),
  pod('sidecar.mesh.io/statsInclusionSuffixes', 'Extra proxy statistics by suffix', { extra: '' }),
  pod('sidecar.mesh.io/statsInclusionRegexps', 'Extra proxy statistics by expression', { extra: '' }),
  pod('status.sidecar.mesh.io/port', 'Port of the agent\'s health endpoint'),
  pod('readiness.status.sidecar.mesh.io/applicationPorts', 'Application ports the readiness check waits for'),
  pod('readiness.status.sidecar.mesh.io/initialDelaySeconds', 'Initial delay of the proxy readiness probe'),
  pod('readiness.status.sidecar.mesh.io/periodSeconds', 'Period of the proxy readiness probe'),
  pod('readiness.status.sidecar.mesh.io/failureThreshold', 'Failure threshold of the proxy readiness probe'),
  pod('traffic.sidecar.mesh.io/includeOutboundIPRanges', 'Outbound address ranges captured'),
  pod('traffic.sidecar.mesh.io/excludeOutboundIPRanges', 'Outbound address ranges not captured'),
  pod('traffic.sidecar.mesh.io/includeInboundPorts', 'Inbound ports captured'),
  pod('traffic.sidecar.mesh.io/excludeInboundPorts', 'Inbound ports not captured'),
  pod('traffic.sidecar.mesh.io/includeOutboundPorts', 'Outbound ports captured whatever their address'),
  pod('traffic.sidecar.mesh.io/excludeOutboundPorts', 'Outbound ports not captured'),
  pod('traffic.sidecar.mesh.io/excludeInterfaces', 'Network interfaces not captured'),
  pod('traffic.sidecar.mesh.io/orchvirtInterfaces', 'Virtual-machine interfaces whose traffic is captured'),
  pod('proxy.mesh.io/config', 'ProxyConfig overrides for this workload (YAML)'),
  pod('proxy.mesh.io/overrides', 'Set by the injector: container fields the user overrode'),
  pod('prometheus.mesh.io/merge-metrics', 'Whether the agent merges application and proxy metrics'),
  pod('inject.mesh.io/templates', 'Injection templates to apply'),
  pod('ambient.mesh.io/redirection', 'Set by the node plugin: traffic redirected to the node proxy'),
  { name: 'networking.mesh.io/exportTo', resources: ['Service'], description: 'Namespaces a Service is visible to' },
  { name: 'kubernetes.io/ingress.class', resources: ['Ingress'], description: 'The ingress controller an Ingress is for; `mesh` for the mesh gateway' },
  { name: 'mesh.io/dry-run', resources: ['AuthorizationPolicy'], description: 'Evaluate the policy and log the decision without enforcing it' },
  { name: 'mesh.io/rev', resources: ['Pod'], description: 'Set by the injector: the revision that injected the pod' },
  { name: 'gateway.mesh.io/controller-version', resources: ['Gateway'], description: 'Set by the gateway controller: the version that last reconciled it' },
];

/** Annotations set by the mesh itself: never the user's mistake, so never reported. */
export const MESH_SET_ANNOTATIONS: ReadonlySet<string> = new Set(['sidecar.mesh.io/status', 'gateway.mesh.io/controller-version', 'mesh.io/rev']);

const BY_NAME = new Map(MESH_ANNOTATIONS.map((a) => [a.name, a]));

export function meshAnnotation(name: string): MeshAnnotation | undefined {
  return BY_NAME.get(name);
}

/** Whether an annotation is the mesh's to check: one in a mesh domain, or one the mesh documents. */
export function inMeshDomain(name: string): boolean {
  if (BY_NAME.has(name)) return true;
  const slash = name.indexOf('/');
  return slash > 0 && name.slice(0, slash).endsWith('mesh.io');
}
