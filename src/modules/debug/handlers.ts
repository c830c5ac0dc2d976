import type { PluginStatus } from '../plugins/resolution';
import type { DebugHandler } from './debug-server';

/*
 * Generic debug handlers built from callbacks, so the debug interface depends on no
 * particular store, registry or plugin loader: the daemon wires the callbacks in.
 */

/** `/debug/configz`: every config resource, grouped by kind (kinds sorted); `?kind=` narrows to one kind. */
export function configzHandler(snapshot: () => ReadonlyMap<string, readonly object[]>): DebugHandler {
  return {
    path: '/debug/configz',
    description: 'All config resources known to the daemon, grouped by kind (?kind= for one kind)',
    handle(query) {
      const only = query.get('kind');
      const grouped: Record<string, readonly object[]> = {};
      for (const [kind, resources] of [...snapshot()].sort(([a], [b]) => a.localeCompare(b))) {
        if (!only || only === kind) grouped[kind] = resources;
      }
      return { json: grouped };
    },
  };
}

/** `/debug/registryz`: the services of the service registry, as the registry gives them. */
export function registryzHandler(services: () => readonly unknown[]): DebugHandler {
  return {
    path: '/debug/registryz',
    description: 'Services in the service registry',
    handle: () => ({ json: services() }),
  };
}

/** The parts of a PluginStatus worth showing; a structural subset so other shapes fit too. */
export type PluginView = Pick<PluginStatus, 'name' | 'source' | 'enabledBy' | 'enabled' | 'reason'> & {
  description?: string;
  provides?: readonly symbol[];
};

/**
 * `/debug/plugins`: each plugin, whether it is on and why. The classes and points of a
 * PluginStatus do not serialise (functions, symbols), so they are reduced to the names
 * of the contribution points the plugin provides.
 */
export function pluginsHandler(plugins: () => readonly PluginView[]): DebugHandler {
  return {
    path: '/debug/plugins',
    description: 'Plugins, whether each is enabled and why',
    handle: () => ({
      json: plugins().map((p) => ({
        name: p.name,
        source: p.source,
        enabled: p.enabled,
        enabledBy: p.enabledBy,
        reason: p.reason,
        description: p.description ?? '',
        provides: (p.provides ?? []).map((s) => s.description ?? s.toString()),
      })),
    }),
  };
}
