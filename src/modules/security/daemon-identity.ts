/**
 * The daemon's service host name (DESIGN.md §1: `meshd.<system namespace>.svc`): always in the
 * daemon's serving certificate, and what agents check it against when they reach the daemon
 * by IP address.
 */
export function daemonServiceName(systemNamespace: string): string {
  return `meshd.${systemNamespace}.svc`;
}
