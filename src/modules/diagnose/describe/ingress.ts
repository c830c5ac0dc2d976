/**
 * Exposure through ingress gateways: the VirtualServices bound to a Gateway (not the `mesh`
 * gateway) that route to one of the pod's Services, the ingress gateway pods that Gateway
 * selects, and the address the gateway's Service is reached at.
 */
import type { V1Pod, V1Service } from '@kubernetes/client-node';
import { ConfigResource } from '../../config';
import { GatewaySpec } from '../../config/kinds/gateway';
import type { PushContext } from '../../model/push-context';
import { labelsMatch } from '../../registry';
import { subsetsOf } from './destination-rule';
import { targetPodPort } from './service-ports';
import { LEVEL0, Lines, SEPARATOR } from './text';
import { VirtualService, writeVirtualService } from './virtual-service';

/** The label of the ingress gateway pods (the incumbent's `istio=ingressgateway`). */
export const INGRESS_GATEWAY_SELECTOR = 'mesh=ingressgateway';
const MESH_GATEWAY = 'mesh';

/** An ingress gateway Service and the gateway pods it selects. */
export interface IngressInfo {
  service: V1Service;
  pods: V1Pod[];
}

export interface IngressInputs {
  /** Running ingress gateway pods, in every namespace. */
  gatewayPods: V1Pod[];
  /** The Services of the namespaces those pods run in. */
  gatewayServices: V1Service[];
  /** The described pod's Services and labels, and where the user looks from. */
  services: V1Service[];
  podLabels: Record<string, string>;
  viewerNamespace: string;
  push: PushContext;
}

/** `maps.Contains`: every key of `selector` has that value in `labels` (an empty selector is contained in anything). */
function contains(labels: Readonly<Record<string, string>> | undefined, selector: Readonly<Record<string, string>> | undefined): boolean {
  return labelsMatch(selector ?? {}, labels ?? {});
}

/** The gateway Services with the gateway pods each selects (those selecting none are left out). */
export function ingressInfos(pods: readonly V1Pod[], services: readonly V1Service[]): IngressInfo[] {
  return services
    .map((service) => ({ service, pods: pods.filter((p) => p.metadata?.namespace === service.metadata?.namespace && p.metadata?.labels && contains(p.metadata.labels, service.spec?.selector)) }))
    .filter((i) => i.pods.length > 0);
}

/** The load balancer's address, else the first gateway pod's node, else unknown. */
function ingressIp(info: IngressInfo): string {
  const lb = info.service.status?.loadBalancer?.ingress?.[0]?.ip;
  if (lb) return lb;
  return info.pods[0]?.status?.hostIP || 'unknown';
}

/** `Exposed on Ingress Gateway http://<address>[:port]` for the gateway Service's plain HTTP ports. */
function writeIngressService(out: Lines, info: IngressInfo): void {
  for (const port of info.service.spec?.ports ?? []) {
    if ((port.protocol ?? 'TCP') !== 'TCP' || (port.name !== 'http' && port.name !== 'http2')) continue;
    if (typeof targetPodPort(info.pods[0], port) !== 'number') continue;
    out.add(`Exposed on Ingress Gateway http://${ingressIp(info)}${port.port === 80 ? '' : `:${port.port}`}`, LEVEL0);
  }
}

/** `ns/name` of a VirtualService's gateway reference (a bare name is in the VirtualService's namespace). */
function gatewayRef(ref: string, vsNamespace: string): { namespace: string; name: string } {
  const slash = ref.indexOf('/');
  return slash >= 0 ? { namespace: ref.slice(0, slash), name: ref.slice(slash + 1) } : { namespace: vsNamespace, name: ref };
}

/** Whether any route of the VirtualService sends traffic to `host`. */
function routesTo(push: PushContext, vs: VirtualService, host: string): boolean {
  const ns = vs.metadata.namespace;
  const dests = [...(vs.spec.http ?? []).flatMap((r) => r.route ?? []), ...(vs.spec.tcp ?? []).flatMap((r) => r.route ?? []), ...(vs.spec.tls ?? []).flatMap((r) => r.route ?? [])];
  return dests.some((d) => push.qualify(d.destination.host, ns) === host);
}

export function writeIngress(out: Lines, input: IngressInputs): void {
  const { push } = input;
  if (input.gatewayPods.length === 0) {
    out.add('Skipping Gateway information (no ingress gateway pods)');
    return;
  }
  const infos = ingressInfos(input.gatewayPods, input.gatewayServices);
  if (infos.length === 0) out.add('Skipping Gateway information (no ingress gateway service)');
  const gateways = push.resources<GatewaySpec>('Gateway');
  const shown = new Set<string>();
  const namespaces = [...new Set(input.gatewayPods.map((p) => p.metadata?.namespace ?? 'default'))].sort();
  for (const svc of input.services) {
    const host = push.qualify(`${svc.metadata?.name}.${svc.metadata?.namespace}.svc.${push.options.domain}`, svc.metadata?.namespace ?? 'default');
    const candidates = new Map<string, VirtualService>();
    for (const ns of namespaces) for (const vs of push.virtualServices(ns)) candidates.set(`${vs.metadata.namespace}/${vs.metadata.name}`, vs as VirtualService);
    for (const vs of candidates.values()) {
      if (!routesTo(push, vs, host)) continue;
      for (const ref of vs.spec.gateways ?? []) {
        if (ref === '' || ref === MESH_GATEWAY) continue;
        const { namespace, name } = gatewayRef(ref, vs.metadata.namespace);
        const id = `${namespace}/${name}`;
        if (shown.has(id)) continue;
        shown.add(id);
        const gw = gateways.find((g) => g.metadata.namespace === namespace && g.metadata.name === name) as ConfigResource<GatewaySpec> | undefined;
        if (!gw) {
          out.add(`WARNING: VirtualService ${vs.metadata.name}.${vs.metadata.namespace} references the non-existent gateway ${id}`);
          continue;
        }
        const selector = gw.spec.selector ?? {};
        if (Object.keys(selector).length === 0) {
          out.add(`Ingress Gateway ${id} applies to all workloads`);
          continue;
        }
        const selected = infos.filter((i) => i.pods.some((p) => contains(p.metadata?.labels, selector))).sort((a, b) => (ingressIp(a) < ingressIp(b) ? -1 : ingressIp(a) > ingressIp(b) ? 1 : 0));
        if (selected.length === 0) continue;
        // The DestinationRule the gateway's proxy uses for the Service.
        const gatewayPod = selected[0].pods.find((p) => contains(p.metadata?.labels, selector))!;
        const dr = push.destinationRuleFor(host, { namespace: gatewayPod.metadata?.namespace ?? 'default', labels: gatewayPod.metadata?.labels ?? {} });
        out.add(SEPARATOR);
        for (const info of selected) writeIngressService(out, info);
        writeVirtualService(out, LEVEL0, vs, { host, subsets: subsetsOf(dr, input.podLabels), dr, qualify: (h, n) => push.qualify(h, n), viewerNamespace: input.viewerNamespace });
      }
    }
  }
}
