/**
 * LDS of a sidecar (DESIGN.md §7).
 *
 * Without capture (`interceptionMode: NONE`): an inbound listener `<ip>_<port>` on
 * INSTANCE_IP:<service port> per service port of the workload, forwarding to
 * `inbound|<port>||`; an outbound listener `127.0.0.1_<port>` (or `<bind>_<port>` for a Sidecar
 * egress bind) per outbound port of the scope.
 *
 * With capture (REDIRECT/TPROXY): `virtualOutbound` on 0.0.0.0:15001 hands connections to the
 * per-port listeners `0.0.0.0_<port>` (not bound) by original destination, anything else to
 * PassthroughCluster; `virtualInbound` on 0.0.0.0:15006 has one chain per workload port and a
 * passthrough chain to InboundPassthroughCluster.
 *
 * With mTLS options, each inbound port's chain is split by its PeerAuthentication mode
 * (`inbound-tls.ts`): STRICT keeps only an mTLS chain, PERMISSIVE adds it beside the plain-text
 * one (the TLS inspector tells them apart), DISABLE keeps only plain text.
 */
import { isIP } from 'node:net';
import { TCPRoute } from '../../config/kinds/virtual-service';
import { Proxy } from '../../model/proxy';
import { PushContext } from '../../model/push-context';
import { isHttpProtocol, labelsMatch, Service, ServicePort } from '../../registry/model';
import { workloadPortMtlsMode } from '../../security/mtls';
import { TypeUrl } from '../../envoy/type-urls';
import { EnvoyFilter, FilterChainContext, XdsResource } from '../../model/generator';
import { destinationCluster, endpointAddress, EnvoyEnum } from '../common';
import { inboundClusterName, outboundClusterName } from '../../model/naming';
import { BLACKHOLE_CLUSTER, INBOUND_PASSTHROUGH_CLUSTER, PASSTHROUGH_CLUSTER } from './clusters';
import { inboundHcm, ORIGINAL_DST_FILTER, ORIGINAL_DST_TYPE, outboundHcm, tcpChainFilters, tcpProxy } from './filters';
import { InboundInstance, inboundDependencies, inboundInstances, inboundKey } from './inbound';
import { InboundChainVariant, inboundChainVariants, needsTlsInspector, tlsInspector } from './inbound-tls';
import { encodeNamed, pick, SidecarContext } from './options';
import { configKey, OutboundPort, routeNameOf, SidecarScope, sidecarScope } from './scope';

type Obj = Record<string, unknown>;

export const VIRTUAL_OUTBOUND = 'virtualOutbound';
export const VIRTUAL_INBOUND = 'virtualInbound';
export const OUTBOUND_CAPTURE_PORT = 15001;
export const INBOUND_CAPTURE_PORT = 15006;

export function sidecarListeners(ctx: SidecarContext, push: PushContext, proxy: Proxy, names: readonly string[] | undefined): XdsResource[] {
  const scope = sidecarScope(push, proxy);
  const mode = proxy.interceptionMode;
  const outbound = push.memoize(`${ctx.memoPrefix}/lds-out/${mode}/${configKey(push, proxy, scope)}`, () =>
    encodeNamed(TypeUrl.Listener, outboundListeners(ctx, push, proxy, scope)),
  );
  const inbound = push.cached('lds', `${ctx.memoPrefix}/lds-in/${mode}/${inboundKey(push, proxy, mode === 'NONE')}`, inboundDependencies(push, proxy), () =>
    encodeNamed(TypeUrl.Listener, inboundListeners(ctx, push, proxy)),
  );
  return pick([...outbound, ...inbound], names);
}

function socketAddress(address: string, port: number): Obj {
  return endpointAddress(address, port);
}

function tcpChain(cluster: string): Obj {
  return { filters: [tcpProxy(cluster, cluster)] };
}

// ---------------------------------------------------------------------------------------------
// Outbound
// ---------------------------------------------------------------------------------------------

export function outboundListeners(ctx: SidecarContext, push: PushContext, proxy: Proxy, scope: SidecarScope): Obj[] {
  const capture = proxy.interceptionMode !== 'NONE';
  const out: Obj[] = [];
  if (capture) out.push(virtualOutbound(scope));
  for (const port of scope.ports) {
    const listener = outboundPortListener(ctx, push, proxy, scope, port, capture && !port.captureNone);
    if (listener) out.push(listener);
  }
  return out;
}

function virtualOutbound(scope: SidecarScope): Obj {
  const catchAll = scope.outboundMode === 'REGISTRY_ONLY' ? BLACKHOLE_CLUSTER : PASSTHROUGH_CLUSTER;
  return {
    name: VIRTUAL_OUTBOUND,
    address: socketAddress('0.0.0.0', OUTBOUND_CAPTURE_PORT),
    use_original_dst: { value: true },
    traffic_direction: EnvoyEnum.TrafficDirection.OUTBOUND,
    filter_chains: [
      // Connections addressed to the capture port itself would loop.
      { name: `${VIRTUAL_OUTBOUND}-blackhole`, filter_chain_match: { destination_port: { value: OUTBOUND_CAPTURE_PORT } }, ...tcpChain(BLACKHOLE_CLUSTER) },
    ],
    default_filter_chain: { name: `${VIRTUAL_OUTBOUND}-catchall-tcp`, ...tcpChain(catchAll) },
  };
}

/**
 * The listener of one outbound port. HTTP services share one connection manager (routes by
 * Host through RDS); a TCP service needs the port to itself: under capture, TCP services with
 * addresses get a chain matching those addresses, and the first other TCP service by host takes
 * the port unless an HTTP service does; without capture the first TCP service by host takes it.
 */
function outboundPortListener(ctx: SidecarContext, push: PushContext, proxy: Proxy, scope: SidecarScope, port: OutboundPort, captured: boolean): Obj | undefined {
  const address = port.bind ?? (captured ? '0.0.0.0' : '127.0.0.1');
  const chains: Obj[] = [];
  if (captured) {
    // An address belongs to the first service (by host) that claims it: chains must not overlap.
    const claimed = new Set<string>();
    for (const { service, port: sp } of port.tcp) {
      const own = service.addresses.filter((a) => !claimed.has(a));
      if (own.length === 0) continue;
      own.forEach((a) => claimed.add(a));
      chains.push({ filter_chain_match: { prefix_ranges: own.map(cidrRange) }, filters: outboundTcpFilters(ctx, push, proxy, service, sp) });
    }
  }
  let matchAll: Obj | undefined;
  if (port.http.length > 0) {
    const first = port.http[0];
    const chain: FilterChainContext = { proxy, push, direction: 'outbound', port: first.port, service: port.http.length === 1 ? first.service : undefined };
    matchAll = { filters: [outboundHcm(ctx, chain, `outbound_${address}_${port.number}`, routeNameOf(port))] };
  } else {
    const first = captured ? port.tcp.find((t) => t.service.addresses.length === 0) : port.tcp[0];
    if (first) matchAll = { filters: outboundTcpFilters(ctx, push, proxy, first.service, first.port) };
  }
  if (matchAll) chains.push(matchAll);
  if (chains.length === 0) return undefined;
  const listener: Obj = {
    name: `${address}_${port.number}`,
    address: socketAddress(address, port.number),
    traffic_direction: EnvoyEnum.TrafficDirection.OUTBOUND,
    filter_chains: chains,
  };
  if (captured) {
    listener.bind_to_port = { value: false };
    if (!matchAll) listener.default_filter_chain = tcpChain(scope.outboundMode === 'REGISTRY_ONLY' ? BLACKHOLE_CLUSTER : PASSTHROUGH_CLUSTER);
  }
  return listener;
}

function cidrRange(address: string): Obj {
  const [ip, bits] = address.split('/');
  const len = bits !== undefined ? Number(bits) : isIP(ip) === 6 ? 128 : 32;
  return { address_prefix: ip, prefix_len: { value: len } };
}

function outboundTcpFilters(ctx: SidecarContext, push: PushContext, proxy: Proxy, service: Service, port: ServicePort): EnvoyFilter[] {
  const target = tcpTarget(push, proxy, service, port);
  const first = typeof target === 'string' ? target : target[0].name;
  const chain: FilterChainContext = { proxy, push, direction: 'outbound', port, service };
  return tcpChainFilters(ctx, chain, first, tcpProxy(first, target));
}

/** The cluster (or weighted clusters) of the first VirtualService TCP route that applies, else the default cluster. */
export function tcpTarget(push: PushContext, proxy: Proxy, service: Service, port: ServicePort): string | { name: string; weight: number }[] {
  const vs = push.virtualServiceFor(service.hostname, proxy.namespace);
  for (const route of vs?.spec.tcp ?? []) {
    if (!tcpRouteApplies(route, proxy, port)) continue;
    const dests = route.route ?? [];
    const weighted = dests.every((d) => !d.weight)
      ? dests.map((d) => ({ d, weight: 1 }))
      : dests.filter((d) => (d.weight ?? 0) > 0).map((d) => ({ d, weight: d.weight! }));
    if (weighted.length === 0) continue;
    const clusters = weighted.map(({ d, weight }) => ({ name: destinationCluster(push, d.destination, vs!.metadata.namespace, port).name, weight }));
    return clusters.length === 1 ? clusters[0].name : clusters;
  }
  return outboundClusterName(port.number, '', service.hostname);
}

function tcpRouteApplies(route: TCPRoute, proxy: Proxy, port: ServicePort): boolean {
  const matches = route.match ?? [];
  if (matches.length === 0) return true;
  return matches.some(
    (m) =>
      (m.port === undefined || m.port === port.number) &&
      labelsMatch(m.sourceLabels, proxy.labels) &&
      (!m.sourceNamespace || m.sourceNamespace === proxy.namespace) &&
      (!m.gateways?.length || m.gateways.includes('mesh')) &&
      !m.destinationSubnets?.length,
  );
}

// ---------------------------------------------------------------------------------------------
// Inbound
// ---------------------------------------------------------------------------------------------

export function inboundListeners(ctx: SidecarContext, push: PushContext, proxy: Proxy): Obj[] {
  const instances = inboundInstances(push, proxy);
  if (proxy.interceptionMode === 'NONE') {
    return instances.map((i) => {
      const address = i.endpoint.address;
      const number = i.endpoint.servicePort.number;
      const variants = chainVariants(ctx, push, proxy, i);
      const filters = inboundFilters(ctx, push, proxy, i, `inbound_${address}_${number}`);
      const named = variants.length > 1 || variants[0].nameSuffix !== '';
      const listener: Obj = {
        name: `${address}_${number}`,
        address: socketAddress(address, number),
        traffic_direction: EnvoyEnum.TrafficDirection.INBOUND,
        filter_chains: variants.map((v) => variantChain(v, named ? inboundClusterName(number) : undefined, {}, filters)),
      };
      if (needsTlsInspector(variants)) listener.listener_filters = [tlsInspector()];
      return listener;
    });
  }
  // Captured connections keep their original destination: the workload port.
  const chains: Obj[] = [];
  const seen = new Set<number>();
  let inspect = false;
  for (const i of instances) {
    const workloadPort = i.endpoint.port;
    if (seen.has(workloadPort)) continue;
    seen.add(workloadPort);
    const variants = chainVariants(ctx, push, proxy, i);
    inspect ||= needsTlsInspector(variants);
    const filters = inboundFilters(ctx, push, proxy, i, `inbound_0.0.0.0_${workloadPort}`);
    const name = inboundClusterName(i.endpoint.servicePort.number);
    for (const v of variants) chains.push(variantChain(v, name, { destination_port: { value: workloadPort } }, filters));
  }
  chains.push({ name: `${VIRTUAL_INBOUND}-passthrough`, ...tcpChain(INBOUND_PASSTHROUGH_CLUSTER) });
  const listenerFilters: Obj[] = [{ name: ORIGINAL_DST_FILTER, typed_config: { '@type': ORIGINAL_DST_TYPE } }];
  if (inspect) listenerFilters.push(tlsInspector());
  const listener: Obj = {
    name: VIRTUAL_INBOUND,
    address: socketAddress('0.0.0.0', INBOUND_CAPTURE_PORT),
    traffic_direction: EnvoyEnum.TrafficDirection.INBOUND,
    listener_filters: listenerFilters,
    filter_chains: chains,
  };
  if (proxy.interceptionMode === 'TPROXY') listener.transparent = { value: true };
  return [listener];
}

/** The chains an inbound port needs under the PeerAuthentication mode of its workload port. */
function chainVariants(ctx: SidecarContext, push: PushContext, proxy: Proxy, instance: InboundInstance): InboundChainVariant[] {
  const mode = ctx.mtls ? workloadPortMtlsMode(push, proxy, instance.endpoint.port) : undefined;
  return inboundChainVariants(mode, isHttpProtocol(instance.endpoint.servicePort.protocol), ctx.mtls);
}

/** One variant of a port's chain: its match (added to `baseMatch`), transport socket and the port's filters. */
function variantChain(variant: InboundChainVariant, name: string | undefined, baseMatch: Obj, filters: EnvoyFilter[]): Obj {
  const chain: Obj = {};
  if (name !== undefined) chain.name = `${name}${variant.nameSuffix}`;
  const match = { ...baseMatch, ...variant.match };
  if (Object.keys(match).length > 0) chain.filter_chain_match = match;
  chain.filters = filters;
  if (variant.transportSocket) chain.transport_socket = variant.transportSocket;
  return chain;
}

function inboundFilters(ctx: SidecarContext, push: PushContext, proxy: Proxy, instance: InboundInstance, statPrefix: string): EnvoyFilter[] {
  const port = instance.endpoint.servicePort;
  const cluster = inboundClusterName(port.number);
  const chain: FilterChainContext = { proxy, push, direction: 'inbound', port, service: instance.service };
  if (isHttpProtocol(port.protocol)) return [inboundHcm(ctx, chain, statPrefix, cluster)];
  return tcpChainFilters(ctx, chain, cluster, tcpProxy(cluster, cluster));
}
