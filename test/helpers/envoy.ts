import { expect } from 'chai';
import { XdsGenerator } from '../../src/modules/model/generator';
import { Proxy, PushContext } from '../../src/modules/model';
import { decodeMessage, encodeMessage } from '../../src/modules/envoy/protos';
import { TypeUrl, XdsTypeUrl } from '../../src/modules/envoy/type-urls';

/** A decoded Envoy message (snake_case fields, enums by name, Any as `{ '@type', ... }`). */
export type Message = Record<string, unknown>;
/** The same, for tests that reach deep into it. */
export type Obj = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

// ---- generating and decoding ----

/** What `gen` makes of `typeUrl` for `proxy`, decoded, by resource name. */
export function decodedOf<M = Message>(gen: XdsGenerator, typeUrl: XdsTypeUrl, push: PushContext, proxy: Proxy, names?: readonly string[]): Record<string, M> {
  const out: Record<string, M> = {};
  for (const r of gen.generate({ proxy, push, typeUrl, names })) out[r.name] = decodeMessage(typeUrl, r.body) as M;
  return out;
}

export const clustersOf = (gen: XdsGenerator, push: PushContext, proxy: Proxy, names?: readonly string[]) => decodedOf(gen, TypeUrl.Cluster, push, proxy, names);
export const endpointsOf = (gen: XdsGenerator, push: PushContext, proxy: Proxy, names?: readonly string[]) =>
  decodedOf(gen, TypeUrl.ClusterLoadAssignment, push, proxy, names);
export const listenersOf = (gen: XdsGenerator, push: PushContext, proxy: Proxy, names?: readonly string[]) => decodedOf(gen, TypeUrl.Listener, push, proxy, names);
export const routesOf = (gen: XdsGenerator, push: PushContext, proxy: Proxy, names?: readonly string[]) =>
  decodedOf(gen, TypeUrl.RouteConfiguration, push, proxy, names);

/** A built (plain object) message as a proxy would see it: encoded, then decoded. */
export function roundTrip(typeUrl: XdsTypeUrl, message: object): Message {
  return decodeMessage(typeUrl, encodeMessage(typeUrl, message));
}

export type VirtualHost = { name: string; domains: string[]; routes: Message[] };

/** The virtual hosts of a decoded RouteConfiguration, by name. */
export function vhostsOf(config: Message): Record<string, VirtualHost> {
  return Object.fromEntries((config.virtual_hosts as VirtualHost[]).map((v) => [v.name, v]));
}

// ---- finding filters in decoded listeners ----

/** The filters of the outbound listener `0.0.0.0_<port>` (its match-all chain, the last). */
export function outboundFilters({ listeners }: { listeners: Record<string, Obj> }, port: number): Obj[] {
  const listener = listeners[`0.0.0.0_${port}`];
  expect(listener, `listener 0.0.0.0_${port}`).to.not.equal(undefined);
  return listener.filter_chains[listener.filter_chains.length - 1].filters;
}

/** The filters of the virtualInbound chain of `port`. */
export function inboundFilters({ listeners }: { listeners: Record<string, Obj> }, port: number): Obj[] {
  const chain = listeners.virtualInbound.filter_chains.find((c: Obj) => c.name === `inbound|${port}||`);
  expect(chain, `inbound chain of ${port}`).to.not.equal(undefined);
  return chain.filters;
}

export const filterNames = (filters: Obj[]) => filters.map((f) => f.name);

/** The HTTP connection manager's config (the chain's only filter). */
export function hcmOf(filters: Obj[]): Obj {
  expect(filterNames(filters)).to.deep.equal(['envoy.filters.network.http_connection_manager']);
  return filters[0].typed_config;
}

export const httpFilterNames = (filters: Obj[]) => hcmOf(filters).http_filters.map((f: Obj) => f.name);

// ---- expected messages, decoded ----

export const ADS_CONFIG_SOURCE = { ads: {}, resource_api_version: 'V3' };
export const edsClusterConfig = (serviceName: string) => ({ eds_config: ADS_CONFIG_SOURCE, service_name: serviceName });

export const HCM_TYPE = 'type.googleapis.com/envoy.extensions.filters.network.http_connection_manager.v3.HttpConnectionManager';
export const TCP_PROXY_TYPE = 'type.googleapis.com/envoy.extensions.filters.network.tcp_proxy.v3.TcpProxy';
export const ROUTER_FILTER = { name: 'envoy.filters.http.router', typed_config: { '@type': 'type.googleapis.com/envoy.extensions.filters.http.router.v3.Router' } };
export const FAULT_FILTER = { name: 'envoy.filters.http.fault', typed_config: { '@type': 'type.googleapis.com/envoy.extensions.filters.http.fault.v3.HTTPFault' } };
export const CORS_FILTER = { name: 'envoy.filters.http.cors', typed_config: { '@type': 'type.googleapis.com/envoy.extensions.filters.http.cors.v3.Cors' }, is_optional: true };
export const tcpProxy = (cluster: string) => ({ name: 'envoy.filters.network.tcp_proxy', typed_config: { '@type': TCP_PROXY_TYPE, stat_prefix: cluster, cluster } });

/** A FractionalPercent per million. */
export const million = (numerator: number) => ({ numerator, denominator: 'MILLION' });

export const str = (s: string) => ({ string_value: s });
/** One entry of the `services` list of the mesh's cluster metadata. */
export const serviceStruct = (host: string, name: string, namespace: string) => ({
  struct_value: { fields: { host: str(host), name: str(name), namespace: str(namespace) } },
});

/** A cluster's `metadata`: the mesh's filter metadata naming its service (and subset). */
export function meshMetadata(host: string, name: string, namespace: string, subset?: string): Message {
  const fields: Message = { services: { list_value: { values: [serviceStruct(host, name, namespace)] } } };
  if (subset) fields.subset = str(subset);
  return { filter_metadata: { mesh: { fields } } };
}

/** A healthy LbEndpoint at a socket address. */
export const lbEndpoint = (address: string, port: number, weight = 1) => ({
  endpoint: { address: { socket_address: { address, port_value: port } } },
  health_status: 'HEALTHY',
  load_balancing_weight: { value: weight },
});
