import { Settings } from '../settings/settings';
import { pluginMetadata, PluginClass } from './decorator';
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
  /** Its parts: one class per plane or role, each bound to the points it provides. */
  readonly classes: readonly PluginClass[];
  /** Every contribution point its parts provide. */
  readonly provides: readonly symbol[];
}

export const PluginStatusToken = Symbol.for('mesh.PluginStatus');

/**
 * Decides, from the settings, which plugins are on. Classes declared with the same plugin name
 * in one source are the parts of one plugin (e.g. its daemon generator and its built-in proxy
 * filter) and must share its enabling setting. A plugin naming an unknown or non-boolean
 * setting, or a name two sources use, is an error.
 */
export function resolvePlugins(settings: Settings, candidates: { cls: PluginClass; source: string }[]): PluginStatus[] {
  const groups = new Map<string, { source: string; classes: PluginClass[] }>();
  for (const { cls, source } of candidates) {
    const options = pluginMetadata(cls)!;
    const group = groups.get(options.name);
    if (!group) {
      groups.set(options.name, { source, classes: [cls] });
      continue;
    }
    const where = describe(options.name, source);
    if (group.source !== source) throw new PluginLoadError(`${where}: the name is already used by a plugin from "${group.source}"`);
    const first = pluginMetadata(group.classes[0])!;
    if (first.enabledBy !== options.enabledBy) {
      throw new PluginLoadError(`${where}: ${cls.name} is enabled by ${options.enabledBy} but ${group.classes[0].name}, part of the same plugin, by ${first.enabledBy}`);
    }
    group.classes.push(cls);
  }
  return [...groups].map(([name, { source, classes }]) => {
    const options = pluginMetadata(classes[0])!;
    const where = describe(name, source);
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
    const parts = classes.map((c) => pluginMetadata(c)!);
    const description = parts.find((p) => p.description)?.description ?? '';
    const provides = [...new Set(parts.flatMap((p) => p.provides))];
    return { name, source, enabledBy: options.enabledBy, enabled, reason, description, classes, provides };
  });
}

function describe(name: string, source: string): string {
  return source === 'built-in' ? `built-in plugin "${name}"` : `plugin "${name}" from "${source}"`;
}
