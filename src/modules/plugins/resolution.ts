import { Settings } from '../settings/settings';
import { pluginMetadata, PluginClass, PluginOptions } from './decorator';
import { PluginLoadError } from './loader';

export interface PluginStatus {
  readonly name: string;
  /** `built-in`, or the MESH_PLUGINS entry it came from. */
  readonly source: string;
  readonly enabledBy: string;
  readonly enabled: boolean;
  /** Why it is on or off, e.g. `PILOT_ENABLE_ALPN_FILTER=true (default)`. */
  readonly reason: string;
  readonly description: string;
  readonly cls: PluginClass;
  readonly options: PluginOptions;
}

export const PluginStatusToken = Symbol.for('mesh.PluginStatus');

/** Decides, from the settings, which plugins are on; a plugin naming an unknown or non-boolean setting is an error. */
export function resolvePlugins(settings: Settings, candidates: { cls: PluginClass; source: string }[]): PluginStatus[] {
  const seen = new Map<string, string>();
  return candidates.map(({ cls, source }) => {
    const options = pluginMetadata(cls)!;
    const where = source === 'built-in' ? `built-in plugin "${options.name}"` : `plugin "${options.name}" from "${source}"`;
    const previous = seen.get(options.name);
    if (previous) throw new PluginLoadError(`${where}: the name is already used by a plugin from "${previous}"`);
    seen.set(options.name, source);
    if (!settings.has(options.enabledBy)) {
      throw new PluginLoadError(`${where}: enabledBy names unknown setting "${options.enabledBy}"`);
    }
    const setting = settings.resolve(options.enabledBy);
    if (setting.definition.type !== 'B') {
      throw new PluginLoadError(
        `${where}: enabledBy setting "${options.enabledBy}" is of type ${setting.definition.type}; it must be a boolean (B)`,
      );
    }
    const enabled = setting.value === true;
    const reason = `${options.enabledBy}=${enabled}${setting.fromEnvironment ? '' : ' (default)'}`;
    return { name: options.name, source, enabledBy: options.enabledBy, enabled, reason, description: options.description ?? '', cls, options };
  });
}
