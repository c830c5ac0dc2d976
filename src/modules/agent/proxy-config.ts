/**
 * The agent's mesh config (DESIGN.md §1): its ProxyConfig is the mesh config file's
 * `defaultConfig`, overridden field by field by the env `PROXY_CONFIG` (YAML or JSON); the
 * trust domain of its certificates is the file's `trustDomain`. Parsed by the mesh config's
 * own parser, so the daemon, the injector and the agent read a ProxyConfig alike.
 */
import { MeshConfigError, parseProxyConfig, ProxyConfig, readMeshConfigFile } from '../mesh-config';

export { InterceptionMode, ProxyConfig } from '../mesh-config';

/** The mesh config file or PROXY_CONFIG cannot be used; the message names which and the field. */
export class ProxyConfigError extends MeshConfigError {}

export interface AgentMeshConfig {
  proxyConfig: ProxyConfig;
  trustDomain: string;
  /** The mesh config's root namespace: the system namespace the daemon runs in. */
  rootNamespace: string;
  /** Unknown or ignored fields, each naming its source; the agent logs them. */
  warnings: string[];
}

/**
 * Reads the mesh config file (absent is fine: defaults apply) and `PROXY_CONFIG`. Wrong types
 * and values are ProxyConfigErrors naming the source and the field.
 */
export function loadAgentMeshConfig(meshConfigPath: string, proxyConfigEnv: string | undefined): AgentMeshConfig {
  try {
    const { values, warnings } = readMeshConfigFile(meshConfigPath);
    let proxyConfig = values.defaultConfig;
    if (proxyConfigEnv?.trim()) {
      const parsed = parseProxyConfig(proxyConfigEnv, 'PROXY_CONFIG', proxyConfig);
      proxyConfig = parsed.config;
      warnings.push(...parsed.warnings);
    }
    return { proxyConfig, trustDomain: values.trustDomain, rootNamespace: values.rootNamespace, warnings: [...warnings] };
  } catch (err) {
    if (err instanceof MeshConfigError && !(err instanceof ProxyConfigError)) throw new ProxyConfigError(err.message);
    throw err;
  }
}
