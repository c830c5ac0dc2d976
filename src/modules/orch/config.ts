import * as fs from 'node:fs';
import * as nodePath from 'node:path';
import type * as k8s from '@kubernetes/client-node';
import { orchLibrary } from './library';
import { parse } from 'yaml';
import { UserError } from '../shared/user-error';

/** An orchestrator config is a few kilobytes; anything this big is not one. */
const MAX_ORCH_CONFIG_BYTES = 4 * 1024 * 1024;

/** Why the orchestrator client could not be configured; names the file or source. */
export class OrchConfigError extends UserError {
  constructor(message: string) {
    super(message);
  }
}

/**
 * The orchestrator client config: the file at `path` when given (ORCHCONFIG), else the
 * in-cluster service account; `context` picks another context than the file's current one.
 * The library does the parsing; we only name the source in errors.
 */
export function loadOrchConfig(path?: string, context?: string): k8s.KubeConfig {
  const config = new (orchLibrary().KubeConfig)();
  try {
    if (path) loadFile(config, path);
    else config.loadFromCluster();
  } catch (err) {
    const source = path ? `orchestrator config ${path}` : 'in-cluster orchestrator config';
    throw new OrchConfigError(`${source}: ${(err as Error).message}`);
  }
  if (context) {
    if (!config.getContextObject(context)) {
      const known = config.getContexts().map((c) => c.name);
      throw new OrchConfigError(`--context: no context "${context}" in ${path ? `orchestrator config ${path}` : 'the in-cluster orchestrator config'} (it has ${known.length ? known.join(', ') : 'none'})`);
    }
    config.setCurrentContext(context);
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
  const config = new (orchLibrary().KubeConfig)();
  config.loadFromOptions({
    clusters: [{ name: 'orch', server, caData: options.caData, skipTLSVerify: options.skipTlsVerify ?? false }],
    users: [{ name: 'mesh', token: options.token }],
    contexts: [{ name: 'mesh', cluster: 'orch', user: 'mesh' }],
    currentContext: 'mesh',
  });
  return config;
}

/**
 * The library's loadFromFile, with the checks it lacks: a size limit, and YAML that must be a
 * mapping (read by our parser first, which bounds aliases), so a wrong file gets a clear error.
 */
function loadFile(config: k8s.KubeConfig, path: string): void {
  const size = fs.statSync(path).size;
  if (size > MAX_ORCH_CONFIG_BYTES) throw new Error(`${size} bytes is more than the ${MAX_ORCH_CONFIG_BYTES} an orchestrator config may have`);
  loadText(config, fs.readFileSync(path, 'utf8'));
  config.makePathsAbsolute(nodePath.dirname(path));
}

/**
 * An orchestrator config given as text (a remote cluster's, from a Secret); `source` names it in
 * errors. Its current context must have a cluster with a server URL.
 * @throws OrchConfigError naming `source`.
 */
export function orchConfigFromText(text: string, source: string): k8s.KubeConfig {
  const config = new (orchLibrary().KubeConfig)();
  try {
    if (Buffer.byteLength(text) > MAX_ORCH_CONFIG_BYTES) throw new Error(`more than the ${MAX_ORCH_CONFIG_BYTES} bytes an orchestrator config may have`);
    loadText(config, text);
  } catch (err) {
    throw new OrchConfigError(`${source}: ${(err as Error).message}`);
  }
  const server = config.getCurrentCluster()?.server;
  if (!server) throw new OrchConfigError(`${source}: no current cluster with a server address`);
  if (!URL.canParse(server)) throw new OrchConfigError(`${source}: server address ${JSON.stringify(server)} is not a URL`);
  return config;
}

/** Our YAML parser first (it bounds aliases and names the line), then the library's loader. */
function loadText(config: k8s.KubeConfig, text: string): void {
  let doc: unknown;
  try {
    doc = parse(text);
  } catch (err) {
    throw new Error(`not YAML: ${(err as Error).message.split('\n')[0]}`);
  }
  if (typeof doc !== 'object' || doc === null || Array.isArray(doc)) throw new Error('not an orchestrator config (a YAML mapping with clusters, users and contexts)');
  config.loadFromString(text);
}
