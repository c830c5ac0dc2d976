export { meshPlugin, pluginMetadata, PluginOptions, PluginClass } from './decorator';
export { loadPluginModules, PluginLoadError, LoadedPluginModule } from './loader';
export { resolvePlugins, PluginStatus, PluginStatusToken } from './resolution';
export { pluginsModule } from './module';
