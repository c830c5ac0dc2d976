/**
 * Listeners of xDS-enabled gRPC servers (gRFC A36): the server asks for
 * `xds.mesh.io/grpc/lds/inbound/<ip>:<port>` (its bootstrap's
 * `server_listener_resource_name_template`) for each address it binds, and serves with what it
 * gets: one HTTP connection manager with an inline route table whose routes are
 * non-forwarding (the server handles the call itself), RBAC filters, then the router.
 *
 * gRPC servers select filter chains by addresses and ports only (a chain matching a
 * transport protocol other than `raw_buffer` is never selected, and listener filters such as
 * the TLS inspector are rejected), so a port serves either mutual TLS or plain text, never
 * both: STRICT serves mTLS; PERMISSIVE serves mTLS when the workload announces it with the TLS
 * mode label (auto-mTLS clients then reach it with mTLS; the incumbent does the same) and plain
 * text otherwise; DISABLE serves plain text.
 */
import { isIP } from 'node:net';
import { Proxy } from '../../model/proxy';
import { PushContext } from '../../model/push-context';
import { Service, ServiceEndpoint } from '../../registry/model';
import { RBAC_HTTP_TYPE } from '../../security/authz/names';
import {
  EffectiveMtlsMode, endpointTlsMode, MESH_TLS_MODE, meshDownstreamTlsContext, tlsTransportSocket, workloadPortMtlsMode,
} from '../../security/mtls';
import { EnvoyFilter, FilterChainContext, HttpFilterContributor } from '../../model/generator';
import { endpointAddress } from '../common';
import { inboundClusterName } from '../../model/naming';
import { HCM_FILTER, HCM_TYPE, ROUTER_FILTER, ROUTER_TYPE } from '../../envoy/well-known';

type Obj = Record<string, unknown>;

/** Prefix of server listener names; the rest is `<ip>:<port>` (`[<ipv6>]:<port>`). */
export const GRPC_SERVER_LISTENER_PREFIX = 'xds.mesh.io/grpc/lds/inbound/';
/** What a gRPC server's bootstrap names as `server_listener_resource_name_template`. */
export const GRPC_SERVER_LISTENER_TEMPLATE = `${GRPC_SERVER_LISTENER_PREFIX}%s`;

const ROUTER: EnvoyFilter = { name: ROUTER_FILTER, typed_config: { '@type': ROUTER_TYPE } };

/** `xds.mesh.io/grpc/lds/inbound/<ip>:<port>` → the address and port; undefined for other names. */
export function parseServerListenerName(name: string): { address: string; port: number } | undefined {
  if (!name.startsWith(GRPC_SERVER_LISTENER_PREFIX)) return undefined;
  const hostPort = name.slice(GRPC_SERVER_LISTENER_PREFIX.length);
  const colon = hostPort.lastIndexOf(':');
  if (colon <= 0) return undefined;
  let address = hostPort.slice(0, colon);
  if (address.startsWith('[') && address.endsWith(']')) address = address.slice(1, -1);
  const portText = hostPort.slice(colon + 1);
  if (!isIP(address) || !/^\d{1,5}$/.test(portText)) return undefined;
  const port = Number(portText);
  return port >= 1 && port <= 65535 ? { address, port } : undefined;
}

/** The mode a gRPC server port serves: one of STRICT (mTLS only) or DISABLE (plain text only). */
export function grpcServerMode(mode: EffectiveMtlsMode, labels: Readonly<Record<string, string>>): 'STRICT' | 'DISABLE' {
  if (mode === 'PERMISSIVE') return endpointTlsMode(labels) === MESH_TLS_MODE ? 'STRICT' : 'DISABLE';
  return mode;
}

/**
 * The server listener `name` of `proxy`, for the service port its workload serves on the
 * requested port; undefined when the name is not a server listener name or the workload serves
 * no service on that port.
 */
export function buildServerListener(
  push: PushContext, proxy: Proxy, name: string, httpFilters: readonly HttpFilterContributor[], mtls: boolean,
): Obj | undefined {
  const requested = parseServerListenerName(name);
  if (!requested) return undefined;
  const instance = instanceOnPort(push, proxy, requested.port);
  if (!instance) return undefined;
  const { endpoint, service } = instance;
  const chain: FilterChainContext = { proxy, push, direction: 'inbound', port: endpoint.servicePort, service };
  const hcm = connectionManager(chain, `inbound_${requested.address}_${requested.port}`, serverFilters(httpFilters, chain));
  const mode = mtls ? grpcServerMode(workloadPortMtlsMode(push, proxy, endpoint.port), proxy.labels) : 'DISABLE';
  const filterChain: Obj =
    mode === 'STRICT'
      ? { name: 'inbound-mtls', filters: [hcm], transport_socket: tlsTransportSocket(meshDownstreamTlsContext('certificate-provider')) }
      : { name: 'inbound-plaintext', filters: [hcm] };
  return { name, address: endpointAddress(requested.address, requested.port), filter_chains: [filterChain] };
}

/** The proxy's service endpoint whose workload port is `port` (first by host when several services share it). */
function instanceOnPort(push: PushContext, proxy: Proxy, port: number): { endpoint: ServiceEndpoint; service: Service } | undefined {
  const candidates = push
    .serviceInstancesOf(proxy)
    .filter((ep) => ep.port === port)
    .sort((a, b) => (a.hostname < b.hostname ? -1 : a.hostname > b.hostname ? 1 : a.servicePort.number - b.servicePort.number));
  for (const endpoint of candidates) {
    const service = push.service(endpoint.hostname);
    if (service) return { endpoint, service };
  }
  return undefined;
}

function connectionManager(chain: FilterChainContext, statPrefix: string, filters: EnvoyFilter[]): EnvoyFilter {
  const port = chain.port.number;
  return {
    name: HCM_FILTER,
    typed_config: {
      '@type': HCM_TYPE,
      stat_prefix: statPrefix,
      route_config: {
        name: inboundClusterName(port),
        virtual_hosts: [
          { name: `inbound|grpc|${port}`, domains: ['*'], routes: [{ name: 'default', match: { prefix: '/' }, non_forwarding_action: {} }] },
        ],
      },
      http_filters: [...filters, ROUTER],
    },
  };
}

/**
 * The contributed inbound HTTP filters a gRPC server can enforce: RBAC with enforced ALLOW or
 * DENY rules (gRPC rejects a whole listener with a filter it does not know, an RBAC filter
 * without `rules` or with action LOG, or two filters of one name). Others (jwt_authn, audit,
 * dry-run-only and optional filters) are left out: gRPC has no equivalent.
 */
function serverFilters(contributors: readonly HttpFilterContributor[], chain: FilterChainContext): EnvoyFilter[] {
  const kept = contributors
    .flatMap((c) => c.httpFilters(chain))
    .filter((f) => {
      if (f.typed_config['@type'] !== RBAC_HTTP_TYPE) return false;
      const rules = f.typed_config.rules as { action?: string } | undefined;
      return rules !== undefined && (rules.action === 'ALLOW' || rules.action === 'DENY');
    });
  const used = new Set<string>();
  return kept.map((f) => {
    let name = f.name;
    for (let n = 2; used.has(name); n++) name = `${f.name}.${n}`;
    used.add(name);
    return name === f.name ? f : { ...f, name };
  });
}
