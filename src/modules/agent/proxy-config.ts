/**
 * The agent's ProxyConfig (DESIGN.md §1): the mesh config file's `defaultConfig`, overridden
 * field by field by the env `PROXY_CONFIG` (YAML or JSON).
 */
import * as fs from 'node:fs';
import { parse as parseYaml } from 'yaml';
import { UserError } from '../shared/user-error';

export type InterceptionMode = 'REDIRECT' | 'TPROXY' | 'NONE';

export interface ProxyConfig {
  discoveryAddress: string;
  binaryPath: string;
  configPath: string;
  interceptionMode: InterceptionMode;
  controlPlaneAuthPolicy: 'MUTUAL_TLS' | 'NONE';
  proxyAdminPort: number;
  statusPort: number;
  drainDuration: string;
}

export const DEFAULT_PROXY_CONFIG: ProxyConfig = {
  discoveryAddress: 'meshd.mesh-system.svc:15012',
  binaryPath: '/usr/local/bin/envoy',
  configPath: './etc/mesh/proxy',
  interceptionMode: 'REDIRECT',
  controlPlaneAuthPolicy: 'MUTUAL_TLS',
  proxyAdminPort: 15000,
  statusPort: 15020,
  drainDuration: '45s',
};

export class ProxyConfigError extends UserError {}

/**
 * Reads the mesh config file (absent is fine: defaults apply) and `PROXY_CONFIG`. Unknown
 * fields are kept out; wrong types and values are errors naming the source and field.
 */
export function loadProxyConfig(meshConfigPath: string, proxyConfigEnv: string | undefined): ProxyConfig {
  let config: ProxyConfig = { ...DEFAULT_PROXY_CONFIG };
  if (fs.existsSync(meshConfigPath) && fs.statSync(meshConfigPath).isFile()) {
    const mesh = parseDocument(readMeshConfig(meshConfigPath), meshConfigPath);
    const defaults = (mesh as Record<string, unknown> | undefined)?.defaultConfig;
    if (defaults !== undefined) config = merge(config, defaults, `${meshConfigPath}: defaultConfig`);
  }
  if (proxyConfigEnv?.trim()) config = merge(config, parseDocument(proxyConfigEnv, 'PROXY_CONFIG'), 'PROXY_CONFIG');
  return config;
}

function readMeshConfig(file: string): string {
  try {
    return fs.readFileSync(file, 'utf8');
  } catch (e) {
    // Unreadable (permissions...): the user's to fix, said in one line.
    throw new ProxyConfigError(`${file}: ${(e as Error).message}`);
  }
}

function parseDocument(text: string, where: string): unknown {
  try {
    return parseYaml(text);
  } catch (e) {
    throw new ProxyConfigError(`${where}: not valid YAML or JSON: ${(e as Error).message.split('\n')[0]}`);
  }
}

function merge(base: ProxyConfig, raw: unknown, where: string): ProxyConfig {
  if (raw === null || typeof raw !== 'object' || Array.isArray(raw)) throw new ProxyConfigError(`${where}: must be a mapping of ProxyConfig fields`);
  const out = { ...base } as Record<string, unknown>;
  const input = raw as Record<string, unknown>;
  const str = (k: string) => {
    if (input[k] === undefined) return;
    if (typeof input[k] !== 'string' || input[k] === '') throw new ProxyConfigError(`${where}.${k}: must be a non-empty string`);
    out[k] = input[k];
  };
  const port = (k: string) => {
    if (input[k] === undefined) return;
    const n = Number(input[k]);
    if (!Number.isInteger(n) || n < 0 || n > 65535) throw new ProxyConfigError(`${where}.${k}: must be a port number from 0 to 65535, not ${JSON.stringify(input[k])}`);
    out[k] = n;
  };
  const oneOf = (k: string, allowed: string[]) => {
    if (input[k] === undefined) return;
    const v = String(input[k]).toUpperCase();
    if (!allowed.includes(v)) throw new ProxyConfigError(`${where}.${k}: must be one of ${allowed.join(', ')}, not ${JSON.stringify(input[k])}`);
    out[k] = v;
  };
  ['discoveryAddress', 'binaryPath', 'configPath', 'drainDuration'].forEach(str);
  ['proxyAdminPort', 'statusPort'].forEach(port);
  oneOf('interceptionMode', ['REDIRECT', 'TPROXY', 'NONE']);
  oneOf('controlPlaneAuthPolicy', ['MUTUAL_TLS', 'NONE']);
  return out as unknown as ProxyConfig;
}
