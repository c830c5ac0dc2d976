/**
 * A waypoint is a Gateway API `Gateway` of the mesh's waypoint class with one HBONE listener,
 * labelled with the traffic it handles (`mesh.io/waypoint-for`) and its control plane revision.
 */
import { UserError } from '../shared/user-error';
import { REVISION_LABEL } from '../model/mesh-labels';
export { REVISION_LABEL };

export const GATEWAY_GROUP = 'gateway.networking.k8s.io';
export const GATEWAY_VERSION = 'v1';
export const GATEWAYS_PLURAL = 'gateways';
export const WAYPOINT_CLASS = 'mesh-waypoint';
export const WAYPOINT_FOR_LABEL = 'mesh.io/waypoint-for';
export const USE_WAYPOINT_LABEL = 'mesh.io/use-waypoint';
export const HBONE_PORT = 15008;
export const HBONE_LISTENER = 'mesh-hbone';
export const TRAFFIC_TYPES = ['all', 'none', 'service', 'workload'] as const;
export type TrafficType = (typeof TRAFFIC_TYPES)[number];
export const DEFAULT_TRAFFIC_TYPE: TrafficType = 'service';

export interface GatewayCondition {
  type: string;
  status: string;
  reason?: string;
  message?: string;
  lastTransitionTime?: string;
}

export interface Gateway {
  apiVersion: string;
  kind: 'Gateway';
  metadata: { name: string; namespace: string; labels?: Record<string, string>; resourceVersion?: string; [k: string]: unknown };
  spec: { gatewayClassName: string; listeners: { name: string; port: number; protocol: string }[]; [k: string]: unknown };
  status?: { conditions?: GatewayCondition[]; [k: string]: unknown };
}

export interface WaypointOptions {
  name: string;
  /** Empty for a generated waypoint without `-n`: it goes where it is applied. */
  namespace: string;
  for: TrafficType;
  revision?: string;
}

const NAME_SYNTAX = /^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$/;

/** A waypoint name is an object name; `none` is reserved (it means no waypoint in `mesh.io/use-waypoint`). */
export function checkWaypointName(name: string): string {
  if (name === 'none') throw new UserError("invalid waypoint name: 'none' is a reserved value");
  if (!NAME_SYNTAX.test(name)) throw new UserError(`invalid waypoint name ${JSON.stringify(name)}: lower case letters, digits and '-', starting and ending with a letter or digit, at most 63 characters`);
  return name;
}

export function buildWaypoint(options: WaypointOptions): Gateway {
  checkWaypointName(options.name);
  const labels: Record<string, string> = { [WAYPOINT_FOR_LABEL]: options.for };
  if (options.revision) labels[REVISION_LABEL] = options.revision;
  return {
    apiVersion: `${GATEWAY_GROUP}/${GATEWAY_VERSION}`,
    kind: 'Gateway',
    metadata: { name: options.name, ...(options.namespace ? { namespace: options.namespace } : {}), labels } as Gateway['metadata'],
    spec: { gatewayClassName: WAYPOINT_CLASS, listeners: [{ name: HBONE_LISTENER, port: HBONE_PORT, protocol: 'HBONE' }] },
  };
}

export function isWaypoint(gw: Partial<Gateway> | undefined): boolean {
  return gw?.spec?.gatewayClassName === WAYPOINT_CLASS;
}

/** The Gateway's `Programmed` condition status; `False` while none is reported (as the incumbent). */
export function programmed(gw: Gateway): string {
  return conditionsOf(gw).find((c) => c.type === 'Programmed')?.status ?? 'False';
}

/** The status conditions, whatever shape the stored object has (only well-formed ones count). */
export function conditionsOf(gw: Gateway): GatewayCondition[] {
  const conditions: unknown = gw.status?.conditions;
  if (!Array.isArray(conditions)) return [];
  return conditions.filter((c): c is GatewayCondition => typeof c === 'object' && c !== null && typeof c.type === 'string' && typeof c.status === 'string');
}

export function revisionOf(gw: Gateway): string {
  return gw.metadata.labels?.[REVISION_LABEL] || 'default';
}
