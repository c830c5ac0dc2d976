import { CniError, CniErrorCode, SUPPORTED_VERSIONS } from './cni-protocol';

/** The mesh plug-in's network config, as install-cni renders it (fields of conformance mesh-cni.conf). */
export interface PluginConfig {
  readonly cniVersion: string;
  readonly name: string;
  readonly type: string;
  readonly prevResult?: Record<string, unknown>;
  readonly pluginLogLevel: string;
  readonly cniAgentRunDir: string;
  readonly ambientEnabled: boolean;
  readonly excludeNamespaces: readonly string[];
  readonly podNamespace: string;
}

export function parsePluginConfig(stdin: string): PluginConfig {
  let raw: unknown;
  try {
    raw = JSON.parse(stdin);
  } catch (err) {
    throw new CniError(CniErrorCode.DecodeFailure, `network config on stdin is not JSON: ${(err as Error).message}`);
  }
  if (!raw || typeof raw !== 'object' || Array.isArray(raw)) {
    throw new CniError(CniErrorCode.DecodeFailure, 'network config on stdin is not a JSON object');
  }
  const conf = raw as Record<string, unknown>;
  const cniVersion = typeof conf.cniVersion === 'string' ? conf.cniVersion : '0.3.1';
  if (!SUPPORTED_VERSIONS.includes(cniVersion)) {
    throw new CniError(CniErrorCode.IncompatibleVersion, `cniVersion ${cniVersion} is not supported (supported: ${SUPPORTED_VERSIONS.join(', ')})`);
  }
  const str = (field: string, fallback: string): string => {
    const value = conf[field];
    if (value === undefined || value === null) return fallback;
    if (typeof value !== 'string') throw new CniError(CniErrorCode.InvalidConfig, `network config field ${field}: expected a string`);
    return value;
  };
  const excluded = conf.exclude_namespaces;
  if (excluded !== undefined && excluded !== null && !(Array.isArray(excluded) && excluded.every((n) => typeof n === 'string'))) {
    throw new CniError(CniErrorCode.InvalidConfig, 'network config field exclude_namespaces: expected a list of namespace names');
  }
  const prev = conf.prevResult;
  if (prev !== undefined && (prev === null || typeof prev !== 'object' || Array.isArray(prev))) {
    throw new CniError(CniErrorCode.InvalidConfig, 'network config field prevResult: expected an object');
  }
  return {
    cniVersion,
    name: str('name', ''),
    type: str('type', ''),
    prevResult: prev as Record<string, unknown> | undefined,
    pluginLogLevel: str('plugin_log_level', 'info'),
    cniAgentRunDir: str('cni_agent_run_dir', '/var/run/mesh-cni'),
    ambientEnabled: conf.ambient_enabled === true,
    excludeNamespaces: (excluded as string[] | null | undefined) ?? [],
    podNamespace: str('pod_namespace', 'mesh-system'),
  };
}
