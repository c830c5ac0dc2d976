/**
 * Clusters from CDS and their endpoints (EDS, or the cluster's own load_assignment for STATIC
 * and DNS clusters), and round-robin picking of a healthy endpoint as the router and the TCP
 * proxy need it.
 */
import { durationMs } from '../filters/shared/config';
import type { Decoded } from '../xds/xds-client';
import { TLS_TRANSPORT_SOCKETS } from '../tls/contexts';
import { TransportSockets, UpstreamTransport } from '../tls/transport-sockets';
import { SecretStore } from '../tls/secrets';
import { structToJson } from '../../envoy/struct';

export interface UpstreamEndpoint {
  address: string;
  port: number;
  weight: number;
  /** `envoy.transport_socket_match` metadata of the endpoint (e.g. `{ tlsMode: 'mesh' }`). */
  transportMatch: Record<string, unknown>;
}

interface TransportChoice {
  match: Record<string, unknown>;
  tls: UpstreamTransport | undefined;
}

export interface UpstreamCluster {
  name: string;
  type: string;
  /** EDS service name the endpoints come from (the cluster name when unset). */
  edsName?: string;
  connectTimeoutMs: number;
  /** Upstream speaks HTTP/2 (explicit_http_config.http2_protocol_options). */
  http2: boolean;
  /** transport_socket_matches in order, then the cluster's transport_socket (plaintext when undefined). */
  transports: TransportChoice[];
  defaultTransport: UpstreamTransport | undefined;
}

const UNHEALTHY = new Set(['UNHEALTHY', 'DRAINING', 'TIMEOUT']);
const SUPPORTED_TYPES = new Set(['EDS', 'STATIC', 'STRICT_DNS', 'LOGICAL_DNS', 'ORIGINAL_DST']);

export class ClusterManager {
  private clusters = new Map<string, UpstreamCluster>();
  /** Endpoints by EDS service name (EDS clusters) or cluster name (inline assignments). */
  private endpoints = new Map<string, UpstreamEndpoint[]>();
  private readonly cursor = new Map<string, number>();

  /** Transports by type URL; the core's TLS alone unless the proxy passes its contributions. */
  constructor(private readonly transports: TransportSockets = new TransportSockets(TLS_TRANSPORT_SOCKETS, new SecretStore())) {}

  /** Replaces every cluster (CDS is state of the world). Throws on a cluster it cannot run. */
  applyClusters(resources: Map<string, Decoded>): void {
    const next = new Map<string, UpstreamCluster>();
    const inline = new Map<string, UpstreamEndpoint[]>();
    for (const [name, c] of resources) {
      const type = String(c.type ?? (c.cluster_type ? 'CUSTOM' : 'EDS'));
      if (!SUPPORTED_TYPES.has(type)) throw new Error(`cluster ${name}: type ${type} is not supported by the built-in proxy`);
      const cluster: UpstreamCluster = {
        name,
        type,
        connectTimeoutMs: durationMs(c.connect_timeout, `cluster ${name}: connect_timeout`) ?? 10_000,
        http2: Boolean(c.typed_extension_protocol_options?.['envoy.extensions.upstreams.http.v3.HttpProtocolOptions']?.explicit_http_config?.http2_protocol_options),
        transports: ((c.transport_socket_matches ?? []) as Decoded[]).map((m, i) => ({
          match: structToJson(m.match),
          tls: this.transports.upstream(m.transport_socket, `cluster ${name}: transport_socket_matches[${i}]`),
        })),
        defaultTransport: this.transports.upstream(c.transport_socket, `cluster ${name}: transport_socket`),
      };
      if (type === 'EDS') cluster.edsName = c.eds_cluster_config?.service_name || name;
      else inline.set(name, endpointsOf(c.load_assignment));
      next.set(name, cluster);
    }
    this.clusters = next;
    for (const [name] of [...this.endpoints]) if (!this.isEdsName(name) && !inline.has(name)) this.endpoints.delete(name);
    for (const [name, list] of inline) this.endpoints.set(name, list);
  }

  /** Updates the endpoints of the assignments received (EDS responses carry only some names). */
  applyEndpoints(resources: Map<string, Decoded>): void {
    for (const [name, assignment] of resources) this.endpoints.set(name, endpointsOf(assignment));
  }

  /** EDS names the clusters need, to subscribe to. */
  edsNames(): string[] {
    return [...this.clusters.values()].flatMap((c) => (c.edsName ? [c.edsName] : []));
  }

  cluster(name: string): UpstreamCluster | undefined {
    return this.clusters.get(name);
  }

  names(): string[] {
    return [...this.clusters.keys()];
  }

  endpointsOf(clusterName: string): readonly UpstreamEndpoint[] {
    const c = this.clusters.get(clusterName);
    if (!c) return [];
    return this.endpoints.get(c.edsName ?? c.name) ?? [];
  }

  /**
   * The next endpoint of the cluster by weighted round robin (each endpoint appears `weight`
   * times in the rotation); undefined when it has none.
   */
  pick(clusterName: string): UpstreamEndpoint | undefined {
    const list = this.endpointsOf(clusterName);
    if (list.length === 0) return undefined;
    const total = list.reduce((n, e) => n + e.weight, 0);
    const at = (this.cursor.get(clusterName) ?? 0) % total;
    this.cursor.set(clusterName, at + 1);
    let left = at;
    for (const e of list) {
      if (left < e.weight) return e;
      left -= e.weight;
    }
    return list[list.length - 1];
  }

  /** The TLS to use toward `endpoint` of the cluster (first matching transport_socket_match), or undefined for plaintext. */
  transportFor(clusterName: string, endpoint: UpstreamEndpoint): UpstreamTransport | undefined {
    const c = this.clusters.get(clusterName);
    if (!c) return undefined;
    for (const t of c.transports) {
      if (Object.entries(t.match).every(([k, v]) => endpoint.transportMatch[k] === v)) return t.tls;
    }
    return c.defaultTransport;
  }

  private isEdsName(name: string): boolean {
    for (const c of this.clusters.values()) if (c.edsName === name) return true;
    return false;
  }
}

function endpointsOf(assignment: Decoded | undefined): UpstreamEndpoint[] {
  const out: UpstreamEndpoint[] = [];
  for (const locality of (assignment?.endpoints ?? []) as Decoded[]) {
    if (locality.priority && Number(locality.priority) > 0) continue; // failover priorities are not used by this proxy
    for (const lb of (locality.lb_endpoints ?? []) as Decoded[]) {
      if (UNHEALTHY.has(String(lb.health_status ?? ''))) continue;
      const socket = lb.endpoint?.address?.socket_address;
      if (!socket?.address) continue;
      const weight = Number(lb.load_balancing_weight?.value ?? 1);
      const transportMatch = structToJson(lb.metadata?.filter_metadata?.['envoy.transport_socket_match']);
      out.push({ address: String(socket.address), port: Number(socket.port_value ?? 0), weight: weight > 0 ? weight : 1, transportMatch });
    }
  }
  return out;
}

