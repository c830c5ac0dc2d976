/**
 * A connected proxy as the daemon sees it, parsed from the xDS `node` (DESIGN.md §1):
 * ID `<type>~<ip>~<pod>.<namespace>~<namespace>.svc.<domain>` and metadata NAMESPACE,
 * LABELS, INSTANCE_IPS, INTERCEPTION_MODE, GENERATOR, CLUSTER_ID and the agent's MESH_META_*.
 */
export type ProxyType = 'sidecar' | 'router';
export type InterceptionMode = 'REDIRECT' | 'TPROXY' | 'NONE';

export interface Proxy {
  id: string;
  type: ProxyType;
  /** Workload addresses: INSTANCE_IPS, else the ID's IP. */
  ips: readonly string[];
  namespace: string;
  labels: Readonly<Record<string, string>>;
  interceptionMode: InterceptionMode;
  /** `grpc` for proxyless gRPC clients; empty for Envoy and the built-in proxy. */
  generator: string;
  clusterId: string;
  /** Every metadata field as a string (nested values as JSON). */
  metadata: Readonly<Record<string, string>>;
}

export class ProxyIdError extends Error {}

/** Node metadata arrives as a google.protobuf.Struct decoded to plain JSON values. */
export function parseProxy(nodeId: string, metadata: Record<string, unknown> = {}): Proxy {
  const parts = nodeId.split('~');
  if (parts.length !== 4) {
    throw new ProxyIdError(`node ID "${nodeId}" is not <type>~<ip>~<pod>.<namespace>~<namespace>.svc.<domain>`);
  }
  const [type, ip, podDotNs, domain] = parts;
  if (type !== 'sidecar' && type !== 'router') throw new ProxyIdError(`node ID "${nodeId}": type "${type}" is neither sidecar nor router`);
  const meta: Record<string, string> = {};
  for (const [k, v] of Object.entries(metadata)) meta[k] = typeof v === 'string' ? v : JSON.stringify(v);
  const namespace = meta.NAMESPACE || podDotNs.split('.')[1] || domain.split('.')[0] || 'default';
  const ips = (meta.INSTANCE_IPS ? meta.INSTANCE_IPS.split(',') : [ip]).map((s) => s.trim()).filter(Boolean);
  const mode = (meta.INTERCEPTION_MODE || 'REDIRECT').toUpperCase();
  return {
    id: nodeId,
    type,
    ips,
    namespace,
    labels: parseLabels(metadata.LABELS),
    interceptionMode: mode === 'TPROXY' || mode === 'NONE' ? mode : 'REDIRECT',
    generator: meta.GENERATOR ?? '',
    clusterId: meta.CLUSTER_ID ?? '',
    metadata: meta,
  };
}

function parseLabels(v: unknown): Record<string, string> {
  let obj = v;
  if (typeof v === 'string') {
    try {
      obj = JSON.parse(v);
    } catch {
      return {};
    }
  }
  if (!obj || typeof obj !== 'object' || Array.isArray(obj)) return {};
  const out: Record<string, string> = {};
  for (const [k, val] of Object.entries(obj)) out[k] = String(val);
  return out;
}
