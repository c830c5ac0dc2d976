import 'reflect-metadata';
import { injectable } from 'inversify';

export interface PluginOptions {
  /** Unique name, shown by `meshctl experimental plugins`. */
  name: string;
  /** A boolean setting of the catalogue; the plugin is bound only when it is on. */
  enabledBy: string;
  /** The contribution points (Symbol tokens) this class is bound to when enabled. */
  provides: symbol[];
  description?: string;
  /**
   * Where its contributions go among those of the same point: `first` (metadata exchange),
   * `authn` (jwt_authn), `authz` (RBAC), `default`, `last` (right before the terminal filter).
   * Within a phase, the order plugins are listed in (built-in first, then MESH_PLUGINS). Default `default`.
   */
  phase?: PluginPhase;
}

/** The phases of a filter chain, in order. */
export const PLUGIN_PHASES = ['first', 'authn', 'authz', 'default', 'last'] as const;
export type PluginPhase = (typeof PLUGIN_PHASES)[number];

const PLUGIN_METADATA = Symbol.for('mesh.plugin');

/** Declares a class as a mesh plugin: `@meshPlugin({ name, enabledBy, provides })`. */
export function meshPlugin(options: PluginOptions) {
  return <T extends abstract new (...args: never[]) => unknown>(target: T): T => {
    if (!options.name) throw new Error(`@meshPlugin on ${target.name}: name is required`);
    if (!options.enabledBy) throw new Error(`@meshPlugin ${options.name}: enabledBy is required`);
    if (!Array.isArray(options.provides) || options.provides.length === 0) {
      throw new Error(`@meshPlugin ${options.name}: provides must name at least one contribution point`);
    }
    if (options.phase !== undefined && !PLUGIN_PHASES.includes(options.phase)) {
      throw new Error(`@meshPlugin ${options.name}: phase must be one of ${PLUGIN_PHASES.join(', ')}`);
    }
    Reflect.defineMetadata(PLUGIN_METADATA, { ...options }, target);
    // Plugins are resolved by the container, so they are injectable without a second decorator.
    if (!Reflect.hasOwnMetadata('inversify:paramtypes', target)) injectable()(target as never);
    return target;
  };
}

export function pluginMetadata(target: unknown): PluginOptions | undefined {
  if (typeof target !== 'function') return undefined;
  return Reflect.getOwnMetadata(PLUGIN_METADATA, target);
}

export type PluginClass = new (...args: never[]) => unknown;
