/** `waypoint list` and `waypoint status` tables. */
import { stringify } from 'yaml';
import { conditionsOf, Gateway, programmed, revisionOf } from './gateway';

function columns(rows: string[][]): string {
  const widths = rows[0].map((_, i) => Math.max(...rows.map((r) => r[i].length)));
  return `${rows.map((r) => r.map((c, i) => (i === r.length - 1 ? c : c.padEnd(widths[i]))).join('  ').trimEnd()).join('\n')}\n`;
}

export function waypointList(gateways: readonly Gateway[], allNamespaces: boolean): string {
  if (!gateways.length) return 'No waypoints found.\n';
  const header = allNamespaces ? ['NAMESPACE', 'NAME', 'REVISION', 'PROGRAMMED'] : ['NAME', 'REVISION', 'PROGRAMMED'];
  const rows = gateways.map((gw) => [...(allNamespaces ? [gw.metadata.namespace] : []), gw.metadata.name, revisionOf(gw), programmed(gw)]);
  return columns([header, ...rows]);
}

/**
 * One row per condition of each waypoint; a waypoint without status says so. The namespace
 * column only when the namespace was not named (`-n`), as the incumbent.
 */
export function waypointStatus(gateways: readonly Gateway[], withNamespace: boolean): string {
  if (!gateways.length) return 'No waypoints found.\n';
  const rows = gateways.flatMap((gw) => {
    const ns = withNamespace ? [gw.metadata.namespace] : [];
    const conditions = conditionsOf(gw);
    if (!conditions.length) return [[...ns, gw.metadata.name, 'Unknown', '-', 'NoStatus', 'no status reported yet']];
    return conditions.map((c) => [...ns, gw.metadata.name, c.status, c.type, String(c.reason ?? ''), String(c.message ?? '').replace(/\s+/g, ' ')]);
  });
  return columns([[...(withNamespace ? ['NAMESPACE'] : []), 'NAME', 'STATUS', 'TYPE', 'REASON', 'MESSAGE'], ...rows]);
}

export function waypointYaml(gateway: Gateway): string {
  return stringify(gateway);
}
