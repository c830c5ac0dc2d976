/**
 * `--templateFile`: a bootstrap of the user's own, in JSON or YAML, that replaces the agent's
 * default. Its text may hold placeholders `{{ NAME }}` (spaces optional) from the fixed set
 * below, substituted before it is parsed:
 *
 * | placeholder            | value                                                        |
 * |------------------------|--------------------------------------------------------------|
 * | NODE_ID                | the xDS node ID (`sidecar~<ip>~<pod>.<ns>~<domain>`)          |
 * | NODE_CLUSTER           | the node cluster (`--serviceCluster`)                         |
 * | NODE_METADATA_JSON     | the node metadata as a JSON object (insert it unquoted)       |
 * | ADMIN_ADDRESS          | `127.0.0.1` (`::1` for IPv6 workloads)                        |
 * | ADMIN_PORT             | ProxyConfig `proxyAdminPort` (15000)                          |
 * | AGENT_STATUS_PORT      | ProxyConfig `statusPort`, the agent's status server (15020)   |
 * | PROXY_STATUS_PORT      | PROXY_STATUS_PORT, Envoy's readiness listener (15021)         |
 * | PROXY_METRICS_PORT     | PROXY_METRICS_PORT, Envoy's Prometheus listener (15090)       |
 * | WILDCARD_ADDRESS       | `0.0.0.0` (`::` for IPv6 workloads)                           |
 * | XDS_SOCKET_PATH        | the agent's xDS proxy socket (`<configPath>/XDS`)             |
 * | SDS_SOCKET_PATH        | the agent's SDS socket                                        |
 * | XDS_API_TYPE           | `DELTA_GRPC` or `GRPC`                                        |
 * | DISCOVERY_ADDRESS      | ProxyConfig `discoveryAddress`                                |
 * | CONFIG_PATH            | ProxyConfig `configPath`                                      |
 *
 * String values are inserted JSON-escaped without quotes, so write `"{{ NODE_ID }}"` inside
 * quotes (a JSON string or a double-quoted YAML string) and numbers bare: `{{ ADMIN_PORT }}`.
 */
import { parse as parseYaml } from 'yaml';
import { EnvoyBootstrapOptions } from './envoy-bootstrap';
import { BootstrapError } from './errors';
import { isPlainObject, Json } from './proto-json';

export class BootstrapTemplateError extends BootstrapError {}

export const TEMPLATE_PLACEHOLDERS = [
  'NODE_ID',
  'NODE_CLUSTER',
  'NODE_METADATA_JSON',
  'ADMIN_ADDRESS',
  'ADMIN_PORT',
  'AGENT_STATUS_PORT',
  'PROXY_STATUS_PORT',
  'PROXY_METRICS_PORT',
  'WILDCARD_ADDRESS',
  'XDS_SOCKET_PATH',
  'SDS_SOCKET_PATH',
  'XDS_API_TYPE',
  'DISCOVERY_ADDRESS',
  'CONFIG_PATH',
] as const;
export type TemplatePlaceholder = (typeof TEMPLATE_PLACEHOLDERS)[number];

export interface TemplateContext extends EnvoyBootstrapOptions {
  discoveryAddress: string;
  configPath: string;
}

/** The text each placeholder becomes. */
export function templateValues(ctx: TemplateContext): Record<TemplatePlaceholder, string> {
  const str = (s: string) => JSON.stringify(s).slice(1, -1);
  const v6 = ctx.ipFamily === 'v6';
  return {
    NODE_ID: str(ctx.node.id),
    NODE_CLUSTER: str(ctx.node.cluster),
    NODE_METADATA_JSON: JSON.stringify(ctx.node.metadata),
    ADMIN_ADDRESS: v6 ? '::1' : '127.0.0.1',
    ADMIN_PORT: String(ctx.proxyAdminPort),
    AGENT_STATUS_PORT: String(ctx.agentStatusPort),
    PROXY_STATUS_PORT: String(ctx.proxyStatusPort),
    PROXY_METRICS_PORT: String(ctx.proxyMetricsPort),
    WILDCARD_ADDRESS: v6 ? '::' : '0.0.0.0',
    XDS_SOCKET_PATH: str(ctx.xdsSocketPath),
    SDS_SOCKET_PATH: str(ctx.sdsSocketPath),
    XDS_API_TYPE: ctx.delta ? 'DELTA_GRPC' : 'GRPC',
    DISCOVERY_ADDRESS: str(ctx.discoveryAddress),
    CONFIG_PATH: str(ctx.configPath),
  };
}

const PLACEHOLDER = /\{\{(.*?)\}\}/g;

/**
 * Substitutes the placeholders of `text` (the content of the template file named `source`)
 * and parses the result as JSON or YAML. Throws BootstrapTemplateError naming the file and
 * line of an unknown placeholder, or why the result does not parse.
 */
export function renderBootstrapTemplate(text: string, values: Record<TemplatePlaceholder, string>, source: string): { [key: string]: Json } {
  const known = new Set<string>(TEMPLATE_PLACEHOLDERS);
  const rendered = text.replace(PLACEHOLDER, (whole, inner: string, offset: number) => {
    const name = inner.trim();
    if (known.has(name)) return values[name as TemplatePlaceholder];
    const line = text.slice(0, offset).split('\n').length;
    const hint = name.startsWith('.') ? ' (Go template syntax is not supported; placeholders are written {{ NAME }})' : '';
    throw new BootstrapTemplateError(`--templateFile ${source}:${line}: unknown placeholder ${whole}${hint}; known placeholders: ${TEMPLATE_PLACEHOLDERS.join(', ')}`);
  });
  // Looked for in the template itself: a substituted value may well contain "{{".
  const unclosed = text.replace(PLACEHOLDER, (whole) => ' '.repeat(whole.length)).indexOf('{{');
  if (unclosed >= 0) {
    throw new BootstrapTemplateError(`--templateFile ${source}:${text.slice(0, unclosed).split('\n').length}: "{{" without a closing "}}"`);
  }
  let parsed: unknown;
  try {
    parsed = parseYaml(rendered);
  } catch (e) {
    throw new BootstrapTemplateError(`--templateFile ${source}: after substitution the bootstrap is not valid JSON or YAML: ${(e as Error).message.split('\n')[0]}`);
  }
  if (!isPlainObject(parsed)) throw new BootstrapTemplateError(`--templateFile ${source}: the bootstrap must be a JSON or YAML object (an Envoy Bootstrap), not ${parsed === null ? 'empty' : typeof parsed}`);
  return parsed;
}
