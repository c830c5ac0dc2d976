import { Service } from './dump';

/**
 * The name of the service a waypoint destination points at: the service whose
 * `<namespace>/<hostname>` or one of whose VIPs (`<network>/<address>`) is the destination.
 * `None` without a waypoint; `NA` when no known service matches.
 */
export function waypointName(destination: string | undefined, services: readonly Service[]): string {
  if (destination === undefined) return 'None';
  const match = services.find((svc) => `${svc.namespace}/${svc.hostname}` === destination || svc.vips.includes(destination));
  return match ? match.name : 'NA';
}
