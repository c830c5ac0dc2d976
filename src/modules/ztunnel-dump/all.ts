import { certificatesTable } from './certificates';
import { connectionsTable } from './connections';
import { ZtunnelDump } from './dump';
import { policiesTable } from './policies';
import { servicesTable } from './services';
import { workloadsTable } from './workloads';

/** `ztunnel-config all -o short`: the workload, service, policy, certificate and connection tables, each after a blank line. */
export function allSummary(dump: ZtunnelDump, now = Date.now()): string {
  return [workloadsTable(dump), servicesTable(dump), policiesTable(dump), certificatesTable(dump, now), connectionsTable(dump)].map((table) => '\n' + table).join('');
}
