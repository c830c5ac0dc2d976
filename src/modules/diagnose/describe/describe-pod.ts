/**
 * `meshctl x describe pod`: what of the mesh's configuration affects a pod, worked out from the
 * orchestrator's objects with the mesh's own rules (the DestinationRule and VirtualService the
 * pod's proxy uses for each of its Services, its merged PeerAuthentication, the RBAC rules its
 * proxy enforces, the ingress gateways routing to it), printed as the incumbent prints it.
 */
import type { V1Pod, V1Service } from '@kubernetes/client-node';
import { ConfigSnapshot } from '../../config';
import { MeshConfigValues } from '../../mesh-config';
import { PushContext } from '../../model/push-context';
import { buildRegistry, labelsMatch } from '../../registry';
import { toPlatformService } from '../../registry/orch/convert';
import { PlatformService } from '../../registry/platform';
import { TrustDomainBundle } from '../../security/authz';
import { subsetsOf, writeDestinationRule } from './destination-rule';
import { writeIngress } from './ingress';
import { writePolicies } from './policies';
import { containersAsProxyUid, hasCanonicalName, hasCanonicalRevision, PROXY_UID, podLabels, podPorts, podRevision, proxyContainer } from './pod-facts';
import { rbacPolicyNames } from './rbac';
import { chainOf, servicePortProtocol, targetPodPort } from './service-ports';
import { kname, LEVEL0, LEVEL1, Lines, SEPARATOR } from './text';
import { writeVirtualService } from './virtual-service';

/** The DNS suffix of Service hosts (the daemon's `--domain` default; meshctl has no flag for it). */
export const SERVICE_DOMAIN = 'cluster.local';

export interface PodDescriptionInputs {
  pod: V1Pod;
  /** The Services of the pod's namespace. */
  namespaceServices: V1Service[];
  mesh: MeshConfigValues;
  config: ConfigSnapshot;
  /** Running ingress gateway pods and the Services of their namespaces. */
  gatewayPods: V1Pod[];
  gatewayServices: V1Service[];
  /** `-n` (else the context's namespace): objects in it are named without their namespace. */
  viewerNamespace: string;
  ignoreUnmeshed: boolean;
}

export interface PodDescription {
  text: string;
  /** Set when the pod has no proxy and unmeshed pods are not ignored: the command fails with it. */
  error?: string;
}

/** The Services whose selector selects the pod, by name. */
export function servicesSelecting(pod: V1Pod, services: readonly V1Service[]): V1Service[] {
  const labels = podLabels(pod);
  return services
    .filter((s) => Object.keys(s.spec?.selector ?? {}).length > 0 && labelsMatch(s.spec!.selector!, labels))
    .sort((a, b) => ((a.metadata?.name ?? '') < (b.metadata?.name ?? '') ? -1 : 1));
}

/** A push context of the cluster's mesh config and resources, with the given Services as its registry. */
export function describePush(mesh: MeshConfigValues, config: ConfigSnapshot, services: readonly V1Service[]): PushContext {
  const convert = { domain: SERVICE_DOMAIN, clusterId: '', sendUnhealthyEndpoints: false, persistentSessionLabel: '' };
  const platform = new Map<string, PlatformService>();
  for (const svc of services) {
    const ps = toPlatformService(svc, convert);
    platform.set(ps.service.hostname, ps);
  }
  const registry = buildRegistry([], [], undefined, { snapshots: [{ services: platform, endpoints: new Map() }] });
  return new PushContext('describe', config, registry, { domain: SERVICE_DOMAIN, rootNamespace: mesh.rootNamespace, mesh });
}

/**
 * The pod's own lines: its name, revision, ports and proxy, its readiness, and (unless unmeshed
 * pods are ignored) what it lacks. Returns the description to end with when the pod has no proxy.
 */
function writePodHeader(out: Lines, pod: V1Pod, viewerNamespace: string, ignoreUnmeshed: boolean): PodDescription | undefined {
  const podName = kname(pod.metadata, viewerNamespace);
  const proxy = proxyContainer(pod);
  if (containersAsProxyUid(pod).length) out.add(`WARNING: User ID (UID) ${PROXY_UID} is reserved for the sidecar proxy.`);
  out.add(`Pod: ${podName}`);
  out.add(`Pod Revision: ${podRevision(pod)}`, LEVEL1);
  const ports = podPorts(pod);
  out.add(ports.length ? `Pod Ports: ${ports.join(', ')}` : 'Pod does not expose ports', LEVEL1);
  if (proxy) out.add(`Pod Proxy: ${proxy.image ?? '(no image)'}`, LEVEL1);
  const phase = pod.status?.phase ?? 'Unknown';
  if (phase !== 'Running') out.add(`Pod is not Running (${phase})`, LEVEL1);
  for (const s of pod.status?.containerStatuses ?? []) if (!s.ready) out.add(`WARNING: Pod ${podName} Container ${s.name} NOT READY`);
  for (const s of pod.status?.initContainerStatuses ?? []) if (!s.ready) out.add(`WARNING: Pod ${podName} Init Container ${s.name} NOT READY`);
  if (!proxy) {
    if (ignoreUnmeshed) return { text: out.text() };
    out.add(`WARNING: ${podName} is not part of mesh; no mesh sidecar`);
    return { text: out.text(), error: `pod ${pod.metadata?.namespace}/${pod.metadata?.name} has no mesh-proxy container, so no mesh configuration applies to it (--ignoreUnmeshed skips such pods)` };
  }
  if (ignoreUnmeshed) return undefined;
  if (pod.spec?.securityContext?.runAsUser === PROXY_UID) out.add(`WARNING: User ID (UID) ${PROXY_UID} is reserved for the sidecar proxy.`, LEVEL1);
  const labels = podLabels(pod);
  if (!hasCanonicalName(labels)) out.add('Suggestion: add required service name label for mesh telemetry (service.mesh.io/canonical-name, app.kubernetes.io/name or app).');
  if (!hasCanonicalRevision(labels)) out.add('Suggestion: add required service revision label for mesh telemetry (service.mesh.io/canonical-revision, app.kubernetes.io/version or version).');
  return undefined;
}

/** The description of a pod without a proxy: its own lines (and the failure, unless unmeshed pods are ignored). */
export function describeUnmeshedPod(pod: V1Pod, viewerNamespace: string, ignoreUnmeshed: boolean): PodDescription {
  const out = new Lines();
  return writePodHeader(out, pod, viewerNamespace, ignoreUnmeshed) ?? { text: out.text() };
}

export function describePod(input: PodDescriptionInputs): PodDescription {
  const { pod, viewerNamespace } = input;
  const out = new Lines();
  const podName = kname(pod.metadata, viewerNamespace);
  const ended = writePodHeader(out, pod, viewerNamespace, input.ignoreUnmeshed);
  if (ended) return ended;

  const services = servicesSelecting(pod, input.namespaceServices);
  if (services.length === 0 && !input.ignoreUnmeshed) out.add(`Warning: No orchestrator Services select pod ${podName}; the mesh reaches pods through the Services that select them`);
  const push = describePush(input.mesh, input.config, input.namespaceServices);
  const workload = { namespace: pod.metadata?.namespace ?? 'default', labels: podLabels(pod) };
  const trustDomains = new TrustDomainBundle(input.mesh.trustDomain, input.mesh.trustDomainAliases);

  out.add(SEPARATOR);
  services.forEach((svc, row) => {
    if (row > 0) out.add(SEPARATOR);
    writeService(out, svc, pod, viewerNamespace);
    const host = `${svc.metadata?.name}.${svc.metadata?.namespace}.svc.${SERVICE_DOMAIN}`;
    const svcPorts = svc.spec?.ports ?? [];
    const multi = svcPorts.length > 1;
    const indent = multi ? LEVEL1 : LEVEL0;
    const dr = push.destinationRuleFor(host, workload);
    const vs = push.virtualServiceFor(host, workload.namespace);
    const subsets = subsetsOf(dr, workload.labels);
    for (const port of svcPorts) {
      if (multi) out.add(`${port.port}:`);
      if (dr) writeDestinationRule(out, indent, dr, workload.labels, viewerNamespace);
      if (vs) writeVirtualService(out, indent, vs, { host, subsets, dr, qualify: (h, n) => push.qualify(h, n), viewerNamespace });
      const rbac = rbacPolicyNames(push, workload, chainOf(port), trustDomains);
      if (rbac.length) out.add(`${multi ? `${port.port} ` : ''}RBAC policies: ${rbac.join(', ')}`);
    }
  });

  out.add(SEPARATOR);
  writePolicies(out, push, workload);

  writeIngress(out, {
    gatewayPods: input.gatewayPods,
    gatewayServices: input.gatewayServices,
    services,
    podLabels: workload.labels,
    viewerNamespace,
    push: describePush(input.mesh, input.config, [...input.namespaceServices, ...input.gatewayServices]),
  });
  return { text: out.text() };
}

/** `Service: <name>` and, per TCP port, its name, number, mesh protocol and the pod port it targets. */
function writeService(out: Lines, svc: V1Service, pod: V1Pod, viewerNamespace: string): void {
  out.add(`Service: ${kname(svc.metadata, viewerNamespace)}`);
  for (const port of svc.spec?.ports ?? []) {
    // UDP is not carried by the mesh.
    if ((port.protocol ?? 'TCP') !== 'TCP') continue;
    const target = targetPodPort(pod, port);
    if (typeof target === 'number') out.add(`Port: ${port.name ?? ''} ${port.port}/${servicePortProtocol(port)} targets pod port ${target}`, LEVEL1);
    else out.add(target.error, LEVEL1);
  }
}
