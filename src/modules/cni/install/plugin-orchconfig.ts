import * as fs from 'node:fs';
import type * as k8s from '@kubernetes/client-node';
import { stringify } from 'yaml';
import { loadOrchConfig, OrchConfigError } from '../../orch';

export interface PluginOrchConfigOptions {
  /** ORCHCONFIG: the installer's own orchestrator config file; '' = in-cluster. */
  orchConfigPath: string;
  /** `--orch-ca-file`: CA to trust instead of the installer's own; '' = the installer's. */
  orchCaFile: string;
  /** `--orch-ca-file` or ORCH_CA_FILE, for messages. */
  orchCaFileSource: string;
  skipTlsVerify: boolean;
}

export interface PluginOrchConfig {
  /** The file's content (it carries a credential: written with ORCHCONFIG_MODE). */
  text: string;
  /** What it holds, without secrets, for the log. */
  summary: string;
}

const CLUSTER = 'local';
const USER = 'mesh-cni';
const CONTEXT = 'mesh-cni-context';

/**
 * The orchestrator config the plug-in uses to read pods: the API server the installer itself
 * talks to, its CA (or `--orch-ca-file`, or no verification with `--skip-tls-verify`) and its
 * credential. Built afresh on each call, so a rotated token file is picked up.
 * @throws OrchConfigError naming ORCHCONFIG (or the in-cluster config), or the CA or token file.
 */
export function buildPluginOrchConfig(options: PluginOrchConfigOptions): PluginOrchConfig {
  let source: k8s.KubeConfig;
  try {
    source = loadOrchConfig(options.orchConfigPath || undefined);
  } catch (err) {
    if (!(err instanceof OrchConfigError)) throw err;
    throw new OrchConfigError(`${options.orchConfigPath ? 'ORCHCONFIG:' : 'ORCHCONFIG is not set;'} ${err.message}`);
  }
  const cluster = source.getCurrentCluster()!;
  const user = source.getCurrentUser();

  const clusterEntry: Record<string, unknown> = { server: cluster.server };
  if (cluster.tlsServerName) clusterEntry['tls-server-name'] = cluster.tlsServerName;
  let caSummary: string;
  if (options.skipTlsVerify) {
    clusterEntry['insecure-skip-tls-verify'] = true;
    caSummary = 'TLS not verified (skip-tls-verify)';
  } else if (options.orchCaFile) {
    clusterEntry['certificate-authority-data'] = readBase64(options.orchCaFile, `CA file ${options.orchCaFile} (${options.orchCaFileSource})`);
    caSummary = `CA from ${options.orchCaFile}`;
  } else if (cluster.caData) {
    clusterEntry['certificate-authority-data'] = cluster.caData;
    caSummary = "CA of the installer's orchestrator config";
  } else if (cluster.caFile) {
    clusterEntry['certificate-authority-data'] = readBase64(cluster.caFile, `CA file ${cluster.caFile} of the installer's orchestrator config`);
    caSummary = `CA from ${cluster.caFile}`;
  } else {
    caSummary = 'no CA (system roots)';
  }

  const userEntry: Record<string, unknown> = {};
  const token = tokenOf(user);
  if (token) userEntry.token = token;
  if (user?.certData) userEntry['client-certificate-data'] = user.certData;
  else if (user?.certFile) userEntry['client-certificate-data'] = readBase64(user.certFile, `client certificate ${user.certFile}`);
  if (user?.keyData) userEntry['client-key-data'] = user.keyData;
  else if (user?.keyFile) userEntry['client-key-data'] = readBase64(user.keyFile, `client key ${user.keyFile}`);
  const credential = token ? 'token' : userEntry['client-certificate-data'] ? 'client certificate' : 'no credential';

  const config = {
    apiVersion: 'v1',
    kind: 'Config',
    clusters: [{ name: CLUSTER, cluster: clusterEntry }],
    users: [{ name: USER, user: userEntry }],
    contexts: [{ name: CONTEXT, context: { cluster: CLUSTER, user: USER } }],
    'current-context': CONTEXT,
  };
  return {
    text: `# Orchestrator config of the mesh CNI plug-in, written by install-cni.\n${stringify(config)}`,
    summary: `server ${cluster.server}, ${caSummary}, ${credential}`,
  };
}

/** The user's bearer token: inline, or read now from its token file (in-cluster service account). */
function tokenOf(user: k8s.User | null): string | undefined {
  if (!user) return undefined;
  if (user.token) return user.token.trim();
  const tokenFile = (user.authProvider as { name?: string; config?: { tokenFile?: string } } | undefined)?.config?.tokenFile;
  if (tokenFile) {
    try {
      return fs.readFileSync(tokenFile, 'utf8').trim();
    } catch (err) {
      throw new OrchConfigError(`cannot read the token file ${tokenFile} of the installer's orchestrator config: ${(err as Error).message}`);
    }
  }
  return undefined;
}

function readBase64(file: string, what: string): string {
  try {
    return fs.readFileSync(file).toString('base64');
  } catch (err) {
    throw new OrchConfigError(`cannot read the ${what}: ${(err as Error).message}`);
  }
}
