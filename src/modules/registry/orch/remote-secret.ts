/**
 * Remote-cluster Secrets as `meshctl create-remote-secret` writes them: in the system
 * namespace, labelled `mesh/multiCluster=true`, each data key a cluster ID and its value the
 * orchestrator config (kubeconfig) that reaches that cluster.
 */
import type { KubeConfig, V1Secret } from '@kubernetes/client-node';
import { parse } from 'yaml';
import { orchConfigFromText } from '../../orch';

export const MULTICLUSTER_SECRET_LABEL = 'mesh/multiCluster';
export const MULTICLUSTER_SECRET_SELECTOR = `${MULTICLUSTER_SECRET_LABEL}=true`;

/** One cluster of a Secret: its ID (the data key) and its config as text. */
export interface RemoteClusterEntry {
  readonly clusterId: string;
  readonly kubeconfig: string;
}

/** `Secret namespace/name`, for logs. */
export function describeSecret(secret: V1Secret): string {
  return `Secret ${secret.metadata?.namespace ?? ''}/${secret.metadata?.name ?? ''}`;
}

/** The Secret's clusters, by data key; values that are not base64 text are decoded as the API gives them. */
export function remoteClustersOf(secret: V1Secret): RemoteClusterEntry[] {
  const data = secret.data ?? {};
  if (typeof data !== 'object' || data === null) return [];
  return Object.keys(data)
    .sort()
    .filter((key) => typeof data[key] === 'string')
    .map((clusterId) => ({ clusterId, kubeconfig: Buffer.from(data[clusterId], 'base64').toString('utf8') }));
}

/**
 * Auth options of an orchestrator config that make the daemon run a program or read its own
 * files on behalf of whoever can write the Secret: refused unless
 * PILOT_INSECURE_MULTICLUSTER_ORCHCONFIG_OPTIONS names them (an auth provider by its name).
 * Returns what is not allowed, e.g. `exec (user remote-admin)`; empty when the config is safe.
 */
export function insecureOptionsOf(kubeconfig: string, allowed: ReadonlySet<string>): string[] {
  let doc: unknown;
  try {
    doc = parse(kubeconfig);
  } catch {
    return []; // Not YAML: loading it reports that.
  }
  const users = (doc as { users?: unknown } | null)?.users;
  if (!Array.isArray(users)) return [];
  const found: string[] = [];
  for (const entry of users) {
    const name = typeof entry?.name === 'string' ? entry.name : '';
    const user = entry?.user;
    if (typeof user !== 'object' || user === null) continue;
    const refuse = (option: string, what = option) => {
      if (!allowed.has(option)) found.push(`${what} (user ${name})`);
    };
    const provider = (user as Record<string, unknown>)['auth-provider'];
    if (provider !== undefined && provider !== null) {
      const providerName = typeof (provider as { name?: unknown }).name === 'string' ? (provider as { name: string }).name : '';
      refuse(providerName, `auth-provider ${providerName || '(unnamed)'}`);
    }
    if ((user as Record<string, unknown>).exec !== undefined && (user as Record<string, unknown>).exec !== null) refuse('exec');
    if (nonEmpty((user as Record<string, unknown>)['client-key'])) refuse('clientKey', 'client-key file');
    if (nonEmpty((user as Record<string, unknown>)['client-certificate'])) refuse('clientCertificate', 'client-certificate file');
    if (nonEmpty((user as Record<string, unknown>).tokenFile)) refuse('tokenFile', 'tokenFile');
  }
  return found;
}

/** PILOT_INSECURE_MULTICLUSTER_ORCHCONFIG_OPTIONS as a set. */
export function allowedInsecureOptions(setting: string): Set<string> {
  return new Set(
    setting
      .split(',')
      .map((s) => s.trim())
      .filter(Boolean),
  );
}

/**
 * The config of one cluster of `secret`, checked: no auth option that is not allowed, loadable,
 * with a server URL. @throws Error naming the Secret and the key.
 */
export function remoteKubeConfig(secret: V1Secret, entry: RemoteClusterEntry, allowed: ReadonlySet<string>): KubeConfig {
  const where = `${describeSecret(secret)} key "${entry.clusterId}"`;
  const insecure = insecureOptionsOf(entry.kubeconfig, allowed);
  if (insecure.length > 0) {
    throw new Error(`${where}: the orchestrator config uses ${insecure.join(', ')}, not allowed for remote clusters (allow with PILOT_INSECURE_MULTICLUSTER_ORCHCONFIG_OPTIONS)`);
  }
  return orchConfigFromText(entry.kubeconfig, where);
}

function nonEmpty(v: unknown): boolean {
  return typeof v === 'string' && v !== '';
}
