/**
 * The files a VM needs to join the mesh (`meshctl x workload entry configure`), from its
 * WorkloadGroup and what the cluster says: `cluster.env` (the agent's environment), `mesh.yaml`
 * (the mesh config, its defaultConfig carrying the same settings as proxyMetadata),
 * `root-cert.pem`, `mesh-token` and `hosts` (the daemon's name at the gateway address).
 */
import { stringify } from 'yaml';

export interface GroupTemplate {
  name: string;
  namespace: string;
  labels: Record<string, string>;
  serviceAccount: string;
  network: string;
}

export interface VmFileInputs {
  group: GroupTemplate;
  clusterId: string;
  autoregister: boolean;
  captureDns: boolean;
  internalIP?: string;
  externalIP?: string;
  /** The mesh config's own fields (from the `mesh` ConfigMap), as parsed YAML; trustDomain is the effective one. */
  meshConfig: Record<string, unknown>;
  trustDomain: string;
  /** `host:port` of the daemon the VM connects to. */
  discoveryAddress: string;
  /** Address of the gateway the VM reaches the daemon through; '' = unknown. */
  ingressIP: string;
  rootCertPem: string;
  token: string;
}

/**
 * The agent settings of the VM, by the names spec/02 gives them: node metadata (`MESH_META_*`,
 * labels as MESH_METAJSON_LABELS), namespace and address. The trust domain comes with mesh.yaml,
 * the service account with the token.
 */
export function vmEnvironment(i: VmFileInputs): Record<string, string> {
  const env: Record<string, string> = {
    MESH_METAJSON_LABELS: JSON.stringify(i.group.labels),
    MESH_META_CLUSTER_ID: i.clusterId,
    MESH_META_DNS_CAPTURE: String(i.captureDns),
    MESH_META_WORKLOAD_NAME: i.group.name,
    POD_NAMESPACE: i.group.namespace,
  };
  if (i.group.network) env.MESH_META_NETWORK = i.group.network;
  if (i.autoregister) env.MESH_META_AUTO_REGISTER_GROUP = i.group.name;
  const instanceIp = i.internalIP || i.externalIP;
  if (instanceIp) env.INSTANCE_IP = instanceIp;
  return Object.fromEntries(Object.entries(env).sort(([a], [b]) => (a < b ? -1 : 1)));
}

/** `NAME='value'` lines, single quotes escaped for a POSIX shell (the file is sourced). */
export function clusterEnv(env: Record<string, string>): string {
  return Object.entries(env)
    .map(([k, v]) => `${k}='${v.replace(/'/g, `'\\''`)}'\n`)
    .join('');
}

/** mesh.yaml: the cluster's mesh config with the VM's discovery address and settings in defaultConfig. */
export function meshYaml(i: VmFileInputs, env: Record<string, string>): string {
  const base = i.meshConfig;
  const defaultConfig = { ...((base.defaultConfig as Record<string, unknown> | undefined) ?? {}) };
  defaultConfig.discoveryAddress = i.discoveryAddress;
  defaultConfig.proxyMetadata = { ...((defaultConfig.proxyMetadata as Record<string, string> | undefined) ?? {}), ...env };
  return stringify({ ...base, trustDomain: i.trustDomain, defaultConfig }, { lineWidth: 0, aliasDuplicateObjects: false });
}

/** hosts: the daemon's host name at the gateway address, one `/etc/hosts` line. */
export function hostsFile(i: VmFileInputs): string {
  if (!i.ingressIP) return '';
  const host = i.discoveryAddress.replace(/:\d+$/, '');
  return `${i.ingressIP} ${host}\n`;
}

export function vmFiles(i: VmFileInputs): Record<string, string> {
  const env = vmEnvironment(i);
  return {
    'cluster.env': clusterEnv(env),
    'mesh.yaml': meshYaml(i, env),
    'root-cert.pem': i.rootCertPem,
    'mesh-token': i.token,
    hosts: hostsFile(i),
  };
}
