import * as path from 'node:path';
import { SettingDefinition, SettingType } from '../settings/types';
import { pluginMetadata, PluginClass } from './decorator';
import { UserError } from '../shared/user-error';

/** A plugin module that cannot be used; start-up stops with this message. */
export class PluginLoadError extends UserError {
  constructor(message: string) {
    super(message);
  }
}

export interface LoadedPluginModule {
  /** As written in MESH_PLUGINS. */
  spec: string;
  /** The file that was loaded. */
  file: string;
  classes: PluginClass[];
  settings: SettingDefinition[];
}

/**
 * Loads the modules named in MESH_PLUGINS: npm package names resolve from the working
 * directory (then from the mesh's own install), anything starting with `.` or `/` is a path.
 */
export function loadPluginModules(list: string, cwd: string): LoadedPluginModule[] {
  const specs = list
    .split(',')
    .map((s) => s.trim())
    .filter((s) => s !== '');
  return specs.map((spec) => loadOne(spec, cwd));
}

function loadOne(spec: string, cwd: string): LoadedPluginModule {
  const isPath = spec.startsWith('.') || path.isAbsolute(spec);
  let file: string;
  try {
    file = isPath ? require.resolve(path.resolve(cwd, spec)) : require.resolve(spec, { paths: [cwd, __dirname] });
  } catch (err) {
    throw new PluginLoadError(`MESH_PLUGINS: cannot find plugin module "${spec}" (${firstLine(err)})`);
  }
  let exported: Record<string, unknown>;
  try {
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    exported = require(file);
  } catch (err) {
    throw new PluginLoadError(`MESH_PLUGINS: plugin module "${spec}" failed to load: ${firstLine(err)}`);
  }
  const values = new Set<unknown>([exported, ...Object.values(exported ?? {})]);
  const classes = [...values].filter((v): v is PluginClass => pluginMetadata(v) !== undefined);
  if (classes.length === 0) {
    throw new PluginLoadError(`MESH_PLUGINS: module "${spec}" (${file}) exports no plugin class declared with @meshPlugin`);
  }
  const settings = readSettings(spec, (exported as { settings?: unknown }).settings);
  return { spec, file, classes, settings };
}

function readSettings(spec: string, raw: unknown): SettingDefinition[] {
  if (raw === undefined) return [];
  if (!Array.isArray(raw)) throw new PluginLoadError(`MESH_PLUGINS: module "${spec}" exports "settings" that is not a list`);
  return raw.map((s, i) => {
    const where = `MESH_PLUGINS: module "${spec}" settings[${i}]`;
    if (!s || typeof s.name !== 'string' || !/^[A-Z][A-Z0-9_]*$/.test(s.name)) {
      throw new PluginLoadError(`${where}: name must be an upper-case environment variable name`);
    }
    if (!['B', 'S', 'I', 'D', 'F'].includes(s.type)) {
      throw new PluginLoadError(`${where} (${s.name}): type must be one of B, S, I, D, F`);
    }
    if (s.default !== undefined && typeof s.default !== 'string') {
      throw new PluginLoadError(`${where} (${s.name}): default must be a string as it would be written in the environment`);
    }
    return {
      name: s.name,
      type: s.type as SettingType,
      default: s.default,
      meaning: typeof s.meaning === 'string' ? s.meaning : '',
      programs: Array.isArray(s.programs) ? s.programs : ['pilot-discovery', 'pilot-agent', 'install-cni', 'meshctl'],
    };
  });
}

function firstLine(err: unknown): string {
  return String((err as Error)?.message ?? err).split('\n')[0];
}
