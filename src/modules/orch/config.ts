import * as k8s from '@kubernetes/client-node';
import { UserError } from '../shared/user-error';

/** Why the orchestrator client could not be configured; names the file or source. */
export class OrchConfigError extends UserError {
  constructor(message: string) {
    super(message);
  }
}

/**
 * The orchestrator client config: the file at `path` when given (ORCHCONFIG), else the
 * in-cluster service account. The library does the parsing; we only name the source in errors.
 */
export function loadOrchConfig(path?: string): k8s.KubeConfig {
  const config = new k8s.KubeConfig();
  try {
    if (path) config.loadFromFile(path);
    else config.loadFromCluster();
  } catch (err) {
    const source = path ? `orchestrator config ${path}` : 'in-cluster orchestrator config';
    throw new OrchConfigError(`${source}: ${(err as Error).message}`);
  }
  const cluster = config.getCurrentCluster();
  if (!cluster || !cluster.server) {
    const source = path ? `orchestrator config ${path}` : 'in-cluster orchestrator config (KUBERNETES_SERVICE_HOST not set?)';
    throw new OrchConfigError(`${source}: no current cluster with a server address`);
  }
  // In-cluster loading without KUBERNETES_SERVICE_HOST/PORT yields "https://undefined:undefined".
  if (!URL.canParse(cluster.server)) {
    const source = path ? `orchestrator config ${path}` : 'in-cluster orchestrator config (KUBERNETES_SERVICE_HOST and KUBERNETES_SERVICE_PORT not set?)';
    throw new OrchConfigError(`${source}: server address ${JSON.stringify(cluster.server)} is not a URL`);
  }
  return config;
}

/** A config for one API server address, as tests and the CNI plugin's own file need. */
export function orchConfigFor(server: string, options: { token?: string; caData?: string; skipTlsVerify?: boolean } = {}): k8s.KubeConfig {
  const config = new k8s.KubeConfig();
  config.loadFromOptions({
    clusters: [{ name: 'orch', server, caData: options.caData, skipTLSVerify: options.skipTlsVerify ?? false }],
    users: [{ name: 'mesh', token: options.token }],
    contexts: [{ name: 'mesh', cluster: 'orch', user: 'mesh' }],
    currentContext: 'mesh',
  });
  return config;
}
