/**
 * The service registry's model: what the generators need to know about services and the
 * workloads behind them, independent of where they were declared.
 */

/** Application protocol of a port, upper-case as in ServiceEntry (`TCP` when unset). */
export type Protocol = 'HTTP' | 'HTTPS' | 'GRPC' | 'GRPC-WEB' | 'HTTP2' | 'MONGO' | 'MYSQL' | 'REDIS' | 'TCP' | 'TLS' | 'UDP';

export interface ServicePort {
  name: string;
  number: number;
  protocol: Protocol;
  /** Port on the workload when an endpoint names none (defaults to `number`). */
  targetPort: number;
}

export type Resolution = 'NONE' | 'STATIC' | 'DNS' | 'DNS_ROUND_ROBIN';

export interface Service {
  /** Fully qualified host name, e.g. `echo.foo.svc.cluster.local`. */
  hostname: string;
  namespace: string;
  ports: readonly ServicePort[];
  resolution: Resolution;
  location: 'MESH_INTERNAL' | 'MESH_EXTERNAL';
  /** Virtual IPs or CIDRs from the ServiceEntry (may be empty). */
  addresses: readonly string[];
  /** Namespaces the service is visible to: `*` (all, default), `.` (own) or names. */
  exportTo: readonly string[];
  /** `ServiceEntry/<ns>/<name>` that declared it. */
  source: string;
}

export interface ServiceEndpoint {
  hostname: string;
  /** The service port this endpoint serves (by service port number). */
  servicePort: ServicePort;
  /** IP address, DNS name or `unix://` path of the workload. */
  address: string;
  /** Port on the workload. */
  port: number;
  labels: Readonly<Record<string, string>>;
  /** Load-balancing weight, at least 1. */
  weight: number;
  /** `region/zone/subzone`, possibly empty. */
  locality: string;
  serviceAccount: string;
  namespace: string;
  network: string;
  /**
   * `WorkloadEntry/<ns>/<name>`, `ServiceEntry/<ns>/<name>#<index>` for inline endpoints, or
   * `Pod/<ns>/<name>` for an orchestrator endpoint (`EndpointSlice/<ns>/<name>` without a pod).
   */
  workload: string;
  /**
   * Absent when healthy. An orchestrator endpoint that is not ready is sent as UNHEALTHY (only
   * with PILOT_SEND_UNHEALTHY_ENDPOINTS), a terminating one of a persistent-session service as
   * DRAINING.
   */
  health?: 'UNHEALTHY' | 'DRAINING';
}

/** Protocols carried over HTTP by the proxy (HTTP connection manager, RDS routes). */
export function isHttpProtocol(p: Protocol): boolean {
  return p === 'HTTP' || p === 'HTTP2' || p === 'GRPC' || p === 'GRPC-WEB';
}

export function normalizeProtocol(p: string | undefined): Protocol {
  const up = (p ?? 'TCP').toUpperCase();
  const known: Protocol[] = ['HTTP', 'HTTPS', 'GRPC', 'GRPC-WEB', 'HTTP2', 'MONGO', 'MYSQL', 'REDIS', 'TCP', 'TLS', 'UDP'];
  return (known as string[]).includes(up) ? (up as Protocol) : 'TCP';
}

/** `key=value` label selection: every selector label must be present with that value. */
export function labelsMatch(selector: Readonly<Record<string, string>> | undefined, labels: Readonly<Record<string, string>>): boolean {
  if (!selector) return true;
  for (const [k, v] of Object.entries(selector)) if (labels[k] !== v) return false;
  return true;
}
