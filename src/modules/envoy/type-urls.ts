/** The resource types of this daemon's ADS, by type URL. */
export const TypeUrl = {
  Listener: 'type.googleapis.com/envoy.config.listener.v3.Listener',
  RouteConfiguration: 'type.googleapis.com/envoy.config.route.v3.RouteConfiguration',
  Cluster: 'type.googleapis.com/envoy.config.cluster.v3.Cluster',
  ClusterLoadAssignment: 'type.googleapis.com/envoy.config.endpoint.v3.ClusterLoadAssignment',
  /** The agent's DNS proxy's name table (NDS), one resource named `''` per proxy. */
  NameTable: 'type.googleapis.com/mesh.networking.nds.v1.NameTable',
} as const;

export type XdsTypeUrl = (typeof TypeUrl)[keyof typeof TypeUrl];

/** Short names used in metrics and logs: lds, rds, cds, eds, nds. */
export const SHORT_TYPE: Record<XdsTypeUrl, 'lds' | 'rds' | 'cds' | 'eds' | 'nds'> = {
  [TypeUrl.Listener]: 'lds',
  [TypeUrl.RouteConfiguration]: 'rds',
  [TypeUrl.Cluster]: 'cds',
  [TypeUrl.ClusterLoadAssignment]: 'eds',
  [TypeUrl.NameTable]: 'nds',
};

/**
 * Order of a full push, so a proxy never references what it has not been sent (make-before-break).
 * The name table references nothing and comes last.
 */
export const PUSH_ORDER: readonly XdsTypeUrl[] = [TypeUrl.Cluster, TypeUrl.ClusterLoadAssignment, TypeUrl.Listener, TypeUrl.RouteConfiguration, TypeUrl.NameTable];

export function isXdsTypeUrl(t: string): t is XdsTypeUrl {
  return t in SHORT_TYPE;
}

/** `type.googleapis.com/` + the message's full name: the `@type` of an Any. */
export function typeUrlOf(messageName: string): string {
  return `type.googleapis.com/${messageName}`;
}
