import * as fs from 'node:fs';
import { CniConfigError, JsonObject, parseMeshPluginConfig } from './cni-config';
import type { InstallCniOptions } from './options';

/**
 * The mesh plug-in's own network config, rendered from a template.
 *
 * The template is `--cni-network-config-file` / CNI_NETWORK_CONFIG_FILE (a file), else
 * `--cni-network-config` / CNI_NETWORK_CONFIG (the text), else DEFAULT_PLUGIN_TEMPLATE. These
 * placeholders are replaced anywhere in it:
 *
 *   __LOG_LEVEL__            --log-level / LOG_LEVEL                     (string content)
 *   __CNI_AGENT_RUN_DIR__    --cni-agent-run-dir / CNI_AGENT_RUN_DIR     (string content)
 *   __POD_NAMESPACE__        POD_NAMESPACE                               (string content)
 *   __NODE_NAME__            NODE_NAME                                   (string content)
 *   __ORCHCONFIG_FILEPATH__  the plug-in's orchestrator config file      (string content)
 *   __AMBIENT_ENABLED__      --ambient-enabled / AMBIENT_ENABLED         (JSON literal true/false)
 *
 * String values are JSON-escaped without quotes, so they belong inside a template's string
 * literal ("__LOG_LEVEL__") and a path with a quote or backslash cannot break the JSON.
 * Substitution keeps line numbers, so errors' line numbers match the template.
 * When the rendered config has no `plugin_log_level`, `--log-level` is written there.
 */
export const DEFAULT_PLUGIN_TEMPLATE = `{
  "cniVersion": "0.3.1",
  "name": "mesh-cni",
  "type": "mesh-cni",
  "ipam": {},
  "dns": {},
  "plugin_log_level": "__LOG_LEVEL__",
  "cni_agent_run_dir": "__CNI_AGENT_RUN_DIR__",
  "ambient_enabled": __AMBIENT_ENABLED__,
  "enablement_selectors": [],
  "exclude_namespaces": null,
  "pod_namespace": "__POD_NAMESPACE__",
  "native_nftables": false,
  "enable_ambient_detection_retry": false
}
`;

export interface PluginConfigValues {
  logLevel: string;
  cniAgentRunDir: string;
  podNamespace: string;
  nodeName: string;
  orchConfigFile: string;
  ambientEnabled: boolean;
}

export interface PluginTemplate {
  text: string;
  /** Where it came from, for messages: `--cni-network-config`, a setting, a file, or the built-in default. */
  source: string;
}

export const BUILT_IN_TEMPLATE_SOURCE = 'the built-in mesh plug-in config';

/**
 * The template the options select.
 * @throws CniConfigError when the template file cannot be read (naming the file and its flag or setting).
 */
export function readPluginTemplate(options: Pick<InstallCniOptions, 'cniNetworkConfig' | 'cniNetworkConfigFile' | 'sources'>): PluginTemplate {
  if (options.cniNetworkConfigFile) {
    const source = `${options.cniNetworkConfigFile} (${options.sources['cni-network-config-file']})`;
    try {
      return { text: fs.readFileSync(options.cniNetworkConfigFile, 'utf8'), source };
    } catch (err) {
      throw new CniConfigError(`cannot read the CNI config template ${source}: ${(err as Error).message}`);
    }
  }
  if (options.cniNetworkConfig) return { text: options.cniNetworkConfig, source: options.sources['cni-network-config'] };
  return { text: DEFAULT_PLUGIN_TEMPLATE, source: BUILT_IN_TEMPLATE_SOURCE };
}

/** Replaces the placeholders (see DEFAULT_PLUGIN_TEMPLATE's comment). */
export function substitutePlaceholders(template: string, values: PluginConfigValues): string {
  const quoted = (s: string) => JSON.stringify(s).slice(1, -1);
  const replacements: Record<string, string> = {
    __LOG_LEVEL__: quoted(values.logLevel),
    __CNI_AGENT_RUN_DIR__: quoted(values.cniAgentRunDir),
    __POD_NAMESPACE__: quoted(values.podNamespace),
    __NODE_NAME__: quoted(values.nodeName),
    __ORCHCONFIG_FILEPATH__: quoted(values.orchConfigFile),
    __AMBIENT_ENABLED__: values.ambientEnabled ? 'true' : 'false',
  };
  return template.replace(new RegExp(Object.keys(replacements).join('|'), 'g'), (name) => replacements[name]);
}

/**
 * Renders and checks the plug-in config.
 * @throws CniConfigError naming the template's source (and line and column for bad JSON) when the
 *   result is not the JSON config of one plugin of type `mesh-cni`.
 */
export function renderPluginConfig(template: PluginTemplate, values: PluginConfigValues): JsonObject {
  const config = parseMeshPluginConfig(substitutePlaceholders(template.text, values), template.source);
  if (!('plugin_log_level' in config)) config.plugin_log_level = values.logLevel;
  return config;
}
