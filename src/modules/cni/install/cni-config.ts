import { isDeepStrictEqual } from 'node:util';
import { CNI_PLUGIN_TYPE } from '../plugin-location';
import { formatCniJson, isJsonObject, jsonKind, JsonTextError, parseJsonText } from './json-text';
import { UserError } from '../../shared/user-error';

/*
 * The node's CNI network configuration and the mesh plug-in's place in it, as pure functions
 * over text and parsed JSON (the installer does the file work). Semantics are the incumbent's:
 * a single-plugin config becomes a list named `k8s-pod-network` at CNI version 0.3.1 holding the
 * original plugin and then the mesh plug-in; a list gets the mesh plug-in appended, replacing an
 * earlier mesh entry; the mesh plug-in's own `cniVersion` is dropped (the list carries one).
 */

export type JsonObject = Record<string, unknown>;

/** Name and version of the list a single-plugin `.conf` becomes. */
export const CHAINED_LIST_NAME = 'k8s-pod-network';
export const CHAINED_LIST_CNI_VERSION = '0.3.1';

/** A network config (the node's, or the mesh plug-in's own) that cannot be used; the message names it. */
export class CniConfigError extends UserError {
  constructor(message: string) {
    super(message);
  }
}

/** An existing network config file: one plugin (`.conf` form, has "type") or a list ("plugins"). */
export type ExistingCniConfig =
  | { kind: 'plugin'; config: JsonObject }
  | { kind: 'list'; config: JsonObject; plugins: JsonObject[] };

function parseObject(text: string, source: string): JsonObject {
  let value: unknown;
  try {
    value = parseJsonText(text, source);
  } catch (err) {
    if (err instanceof JsonTextError) throw new CniConfigError(err.message);
    throw err;
  }
  if (!isJsonObject(value)) throw new CniConfigError(`${source}: a CNI network config must be a JSON object, found ${jsonKind(value)}`);
  return value;
}

/**
 * Reads an existing network config file's text.
 * @param file the file's path, named in errors.
 * @throws CniConfigError when it is not JSON, not an object, neither a plugin nor a list, or a
 *   list whose `plugins` is not a non-empty array of objects with a string `type`.
 */
export function parseExistingCniConfig(text: string, file: string): ExistingCniConfig {
  const config = parseObject(text, file);
  if ('type' in config) {
    if (typeof config.type !== 'string' || config.type === '') {
      throw new CniConfigError(`${file}: "type" must be a plugin name (a non-empty string), found ${jsonKind(config.type)}`);
    }
    return { kind: 'plugin', config };
  }
  if (!('plugins' in config)) {
    throw new CniConfigError(`${file}: neither a plugin config (no "type") nor a config list (no "plugins")`);
  }
  const plugins = config.plugins;
  if (!Array.isArray(plugins)) throw new CniConfigError(`${file}: "plugins" must be an array of plugin configs, found ${jsonKind(plugins)}`);
  if (plugins.length === 0) {
    throw new CniConfigError(`${file}: "plugins" is empty; the node's own network plugin must be configured before the mesh plug-in is chained to it`);
  }
  plugins.forEach((p, i) => {
    if (!isJsonObject(p)) throw new CniConfigError(`${file}: plugins[${i}] must be an object, found ${jsonKind(p)}`);
    if (typeof p.type !== 'string' || p.type === '') throw new CniConfigError(`${file}: plugins[${i}] has no "type" (a non-empty string)`);
  });
  return { kind: 'list', config, plugins: plugins as JsonObject[] };
}

/**
 * Reads the mesh plug-in's rendered config: one plugin of type `mesh-cni`.
 * @param source where the text came from (`--cni-network-config`, a setting, a file), named in errors.
 */
export function parseMeshPluginConfig(text: string, source: string): JsonObject {
  const config = parseObject(text, source);
  if ('plugins' in config) throw new CniConfigError(`${source}: must be the config of the single mesh plug-in, not a config list ("plugins")`);
  if (!('type' in config)) throw new CniConfigError(`${source}: has no "type"; the mesh plug-in's type is "${CNI_PLUGIN_TYPE}"`);
  if (config.type !== CNI_PLUGIN_TYPE) {
    throw new CniConfigError(`${source}: "type" must be "${CNI_PLUGIN_TYPE}" (the name of the installed executable), found ${JSON.stringify(config.type)}`);
  }
  return config;
}

function withoutCniVersion(config: JsonObject): JsonObject {
  const { cniVersion: _dropped, ...rest } = config;
  return rest;
}

const isMesh = (plugin: JsonObject) => plugin.type === CNI_PLUGIN_TYPE;

/** The list with the mesh plug-in chained last (any earlier mesh entry replaced). */
export function insertMeshPlugin(existing: ExistingCniConfig, meshPlugin: JsonObject): JsonObject {
  const mesh = withoutCniVersion(meshPlugin);
  if (existing.kind === 'plugin') {
    return { cniVersion: CHAINED_LIST_CNI_VERSION, name: CHAINED_LIST_NAME, plugins: [withoutCniVersion(existing.config), mesh] };
  }
  return { ...existing.config, plugins: [...existing.plugins.filter((p) => !isMesh(p)), mesh] };
}

/** The list without mesh entries, or undefined when it had none. */
export function removeMeshPlugin(existing: ExistingCniConfig): JsonObject | undefined {
  if (existing.kind !== 'list' || !existing.plugins.some(isMesh)) return undefined;
  return { ...existing.config, plugins: existing.plugins.filter((p) => !isMesh(p)) };
}

/** True when the config is a list holding exactly one mesh entry, equal to what would be inserted. */
export function hasMeshPlugin(existing: ExistingCniConfig, meshPlugin: JsonObject): boolean {
  if (existing.kind !== 'list') return false;
  const entries = existing.plugins.filter(isMesh);
  return entries.length === 1 && isDeepStrictEqual(entries[0], withoutCniVersion(meshPlugin));
}

/** True when the config lists the mesh plug-in at all (whatever its settings). */
export function listsMeshPlugin(existing: ExistingCniConfig): boolean {
  return existing.kind === 'list' ? existing.plugins.some(isMesh) : isMesh(existing.config);
}

/**
 * The config file the installer owns in standalone mode: the plugin itself when the name ends in
 * `.conf`, else a list holding only the mesh plug-in.
 */
export function standaloneCniConfig(meshPlugin: JsonObject, fileName: string): JsonObject {
  const cniVersion = typeof meshPlugin.cniVersion === 'string' ? meshPlugin.cniVersion : CHAINED_LIST_CNI_VERSION;
  if (fileName.endsWith('.conf')) return { ...meshPlugin, cniVersion };
  const name = typeof meshPlugin.name === 'string' ? meshPlugin.name : CNI_PLUGIN_TYPE;
  return { cniVersion, name, plugins: [withoutCniVersion(meshPlugin)] };
}

/**
 * The whole chained merge on text, as the conformance cases state it: the existing file's text
 * plus the plug-in's rendered config → the text to write (sorted keys, two-space indent).
 * @throws CniConfigError naming `existingFile` or `pluginSource`; nothing is written here.
 */
export function mergeCniConfigText(existingText: string, existingFile: string, pluginText: string, pluginSource: string): string {
  const plugin = parseMeshPluginConfig(pluginText, pluginSource);
  const existing = parseExistingCniConfig(existingText, existingFile);
  return formatCniJson(insertMeshPlugin(existing, plugin));
}
