import { alignColumns } from '../proxy-dump';
import { byKeys, equalFold } from './compare';
import { Policy, ZtunnelDump } from './dump';

/** The filtered policies, by namespace, then name. */
function selected(dump: ZtunnelDump, namespace?: string): Policy[] {
  return dump.policies.filter((p) => !namespace || equalFold(p.namespace, namespace)).sort(byKeys((p) => [p.namespace, p.name]));
}

/** NAMESPACE, POLICY NAME, ACTION, SCOPE. */
export function policiesTable(dump: ZtunnelDump, namespace?: string): string {
  const rows = selected(dump, namespace).map((p) => [p.namespace, p.name, p.action, p.scope]);
  return alignColumns([['NAMESPACE', 'POLICY NAME', 'ACTION', 'SCOPE'], ...rows], 1);
}

export function policiesData(dump: ZtunnelDump, namespace?: string): unknown[] {
  return selected(dump, namespace).map((p) => p.raw);
}
