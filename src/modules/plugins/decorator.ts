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
}

const PLUGIN_METADATA = Symbol.for('mesh.plugin');

/** Declares a class as a mesh plugin: `@meshPlugin({ name, enabledBy, provides })`. */
export function meshPlugin(options: PluginOptions) {
  return <T extends abstract new (...args: never[]) => unknown>(target: T): T => {
    if (!options.name) throw new Error(`@meshPlugin on ${target.name}: name is required`);
    if (!options.enabledBy) throw new Error(`@meshPlugin ${options.name}: enabledBy is required`);
    if (!Array.isArray(options.provides) || options.provides.length === 0) {
      throw new Error(`@meshPlugin ${options.name}: provides must name at least one contribution point`);
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
