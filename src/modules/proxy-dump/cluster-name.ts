/** The parts of a mesh cluster name `direction|port|subset|fqdn`; other names are their own FQDN. */
export interface ClusterName {
  direction: string;
  port: number | undefined;
  subset: string;
  fqdn: string;
}

export function parseClusterName(name: string): ClusterName {
  const parts = name.split('|');
  if (parts.length !== 4) return { direction: '', port: undefined, subset: '', fqdn: name };
  const port = Number(parts[1]);
  return { direction: parts[0], port: Number.isInteger(port) ? port : undefined, subset: parts[2], fqdn: parts[3] };
}
