import type { V1Pod } from '@kubernetes/client-node';
import { CaptureInput } from '../../iptables';
import { CniError, CniErrorCode } from './cni-protocol';
import { PROXY_CONTAINER } from '../../model/mesh-labels';
export { PROXY_CONTAINER };

/*
 * Which pods the plug-in captures, and how: the sidecar injector's annotations, read as
 * the incumbent's plug-in reads them (renamed), with its defaults.
 */
export const Annotation = {
  inject: 'sidecar.mesh.io/inject',
  status: 'sidecar.mesh.io/status',
  interceptionMode: 'sidecar.mesh.io/interceptionMode',
  includeOutboundIPRanges: 'traffic.sidecar.mesh.io/includeOutboundIPRanges',
  excludeOutboundIPRanges: 'traffic.sidecar.mesh.io/excludeOutboundIPRanges',
  includeInboundPorts: 'traffic.sidecar.mesh.io/includeInboundPorts',
  excludeInboundPorts: 'traffic.sidecar.mesh.io/excludeInboundPorts',
  includeOutboundPorts: 'traffic.sidecar.mesh.io/includeOutboundPorts',
  excludeOutboundPorts: 'traffic.sidecar.mesh.io/excludeOutboundPorts',
  excludeInterfaces: 'traffic.sidecar.mesh.io/excludeInterfaces',
  orchVirtInterfaces: 'traffic.sidecar.mesh.io/orchvirtInterfaces',
} as const;

/** A pod that still has the init container does its own iptables; the plug-in must not do it twice. */
export const INIT_CONTAINER = 'mesh-init';
/** The proxy's own ports (status, agent, metrics) are never captured inbound. */
const PROXY_INBOUND_PORTS = ['15020', '15021', '15090'];
const DEFAULT_PROXY_ID = '1337';

export type RedirectDecision = { readonly capture: false; readonly reason: string } | { readonly capture: true; readonly input: CaptureInput };

export function redirectFor(pod: V1Pod): RedirectDecision {
  const annotations = pod.metadata?.annotations ?? {};
  const containers = pod.spec?.containers ?? [];
  const proxy = containers.find((c) => c.name === PROXY_CONTAINER);
  if (!(Annotation.status in annotations)) return { capture: false, reason: `no ${Annotation.status} annotation (sidecar not injected)` };
  if (!proxy) return { capture: false, reason: `no ${PROXY_CONTAINER} container` };
  if ((annotations[Annotation.inject] ?? '').toLowerCase() === 'false') return { capture: false, reason: `${Annotation.inject} is "false"` };
  if ((pod.spec?.initContainers ?? []).some((c) => c.name === INIT_CONTAINER)) {
    return { capture: false, reason: `the pod has the ${INIT_CONTAINER} init container, which sets up capture itself` };
  }
  const env = new Map((proxy.env ?? []).map((e) => [e.name, e.value ?? '']));
  const mode = (annotations[Annotation.interceptionMode] ?? 'REDIRECT').toUpperCase();
  if (mode === 'NONE') return { capture: false, reason: `${Annotation.interceptionMode} is NONE` };
  if (mode !== 'REDIRECT' && mode !== 'TPROXY') {
    throw new CniError(CniErrorCode.InvalidAnnotation, `annotation ${Annotation.interceptionMode}: "${mode}" is not REDIRECT, TPROXY or NONE`);
  }
  const uid = String(proxy.securityContext?.runAsUser ?? DEFAULT_PROXY_ID);
  const gid = String(proxy.securityContext?.runAsGroup ?? uid);
  const excludeInbound = [annotations[Annotation.excludeInboundPorts] ?? '', ...PROXY_INBOUND_PORTS].filter(Boolean).join(',');
  return {
    capture: true,
    input: {
      proxyPort: '15001',
      inboundCapturePort: '15006',
      inboundTunnelPort: '15008',
      proxyUid: uid,
      proxyGid: gid,
      inboundInterceptionMode: mode,
      inboundTproxyMark: '1337',
      inboundTproxyRouteTable: '133',
      inboundPorts: annotations[Annotation.includeInboundPorts] ?? '*',
      localExcludePorts: excludeInbound,
      outboundPorts: annotations[Annotation.includeOutboundPorts] ?? '',
      localOutboundPortsExclude: annotations[Annotation.excludeOutboundPorts] ?? '',
      serviceCidr: annotations[Annotation.includeOutboundIPRanges] ?? '*',
      serviceExcludeCidr: annotations[Annotation.excludeOutboundIPRanges] ?? '',
      excludeInterfaces: annotations[Annotation.excludeInterfaces] ?? '',
      orchVirtInterfaces: annotations[Annotation.orchVirtInterfaces] ?? '',
      ownerGroupsInclude: '*',
      ownerGroupsExclude: '',
      hostIpv4LoopbackCidr: '127.0.0.1/32',
      redirectDns: env.get('MESH_META_DNS_CAPTURE') === 'true',
      // The pod's resolver configuration is not visible from the node: capture all DNS.
      captureAllDns: true,
      dnsServers: [],
      dropInvalid: false,
      dualStack: env.get('MESH_DUAL_STACK') === 'true',
    },
  };
}

/** Rewrites a capture-config error about a flag into one about the annotation that fed it. */
export function annotationFor(flagMessage: string): string {
  const byFlag: Record<string, string> = {
    '--mesh-inbound-ports': Annotation.includeInboundPorts,
    '--mesh-local-exclude-ports': Annotation.excludeInboundPorts,
    '--mesh-outbound-ports': Annotation.includeOutboundPorts,
    '--mesh-local-outbound-ports-exclude': Annotation.excludeOutboundPorts,
    '--mesh-service-cidr': Annotation.includeOutboundIPRanges,
    '--mesh-service-exclude-cidr': Annotation.excludeOutboundIPRanges,
    '--mesh-exclude-interfaces': Annotation.excludeInterfaces,
    '--orch-virt-interfaces': Annotation.orchVirtInterfaces,
    '--proxy-uid': `${PROXY_CONTAINER} securityContext.runAsUser`,
    '--proxy-gid': `${PROXY_CONTAINER} securityContext.runAsGroup`,
  };
  const flag = /^(--[a-z-]+):/.exec(flagMessage)?.[1];
  return flag && byFlag[flag] ? flagMessage.replace(flag, `annotation ${byFlag[flag]}`) : flagMessage;
}
