/** `outbound|<port>|<subset>|<host>`: the cluster name of a service port (and subset). */
export function outboundClusterName(port: number, subset: string, host: string): string {
  return `outbound|${port}|${subset}|${host}`;
}

/** `inbound|<port>||`: the cluster of a workload's own port (the incumbent's form). */
export function inboundClusterName(port: number): string {
  return `inbound|${port}||`;
}

export interface ParsedClusterName {
  direction: 'outbound' | 'inbound';
  port: number;
  subset: string;
  host: string;
}

export function parseClusterName(name: string): ParsedClusterName | undefined {
  const parts = name.split('|');
  if (parts.length !== 4 || (parts[0] !== 'outbound' && parts[0] !== 'inbound')) return undefined;
  const port = Number(parts[1]);
  if (!Number.isInteger(port)) return undefined;
  return { direction: parts[0], port, subset: parts[2], host: parts[3] };
}
