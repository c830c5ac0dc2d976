/**
 * `meshctl x workload group create`: a WorkloadGroup (networking.mesh.io/v1) from flags, the
 * template of the WorkloadEntries of VMs that join the mesh, printed as YAML.
 */
import { stringify } from 'yaml';
import { UserError } from '../shared/user-error';

export interface WorkloadGroupFlags {
  name?: string;
  namespace?: string;
  labels: string[];
  annotations: string[];
  ports: string[];
  serviceAccount: string;
  network?: string;
  locality?: string;
}

/** `key=value` pairs as a map; a pair without `=` has an empty value. @throws UserError on an empty key. */
export function keyValues(pairs: string[], flag: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const pair of pairs) {
    const i = pair.indexOf('=');
    const key = i < 0 ? pair : pair.slice(0, i);
    if (!key) throw new UserError(`--${flag} ${JSON.stringify(pair)}: expected key=value`);
    out[key] = i < 0 ? '' : pair.slice(i + 1);
  }
  return out;
}

/** `name=port` pairs as a map of port numbers. */
export function namedPorts(pairs: string[]): Record<string, number> {
  const out: Record<string, number> = {};
  for (const pair of pairs) {
    const m = /^([^=]+)=(\d+)$/.exec(pair);
    const port = m ? Number(m[2]) : NaN;
    if (!m || port < 1 || port > 65535) throw new UserError(`--ports ${JSON.stringify(pair)}: expected name=port with a port from 1 to 65535`);
    out[m[1]] = port;
  }
  return out;
}

export function workloadGroup(flags: WorkloadGroupFlags): Record<string, unknown> {
  if (!flags.name) throw new UserError('expecting a WorkloadGroup name (--name)');
  if (!flags.namespace) throw new UserError('expecting a WorkloadGroup namespace (--namespace)');
  const template: Record<string, unknown> = { ports: namedPorts(flags.ports), serviceAccount: flags.serviceAccount };
  if (flags.network) template.network = flags.network;
  if (flags.locality) template.locality = flags.locality;
  return {
    apiVersion: 'networking.mesh.io/v1',
    kind: 'WorkloadGroup',
    metadata: { name: flags.name, namespace: flags.namespace },
    spec: {
      metadata: { annotations: keyValues(flags.annotations, 'annotations'), labels: keyValues(flags.labels, 'labels') },
      template,
    },
  };
}

export function workloadGroupYaml(flags: WorkloadGroupFlags): string {
  return stringify(workloadGroup(flags), { lineWidth: 0 });
}
