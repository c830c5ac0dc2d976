export { meshPlugin, pluginMetadata, PluginOptions, PluginClass, PluginPhase, PLUGIN_PHASES } from './decorator';
export { ContributionProvider, ContributionPointToken, declareContributionPoint, OrderedContributionProvider, orderByPhase } from './contribution-provider';
export { loadPluginModules, PluginLoadError, LoadedPluginModule } from './loader';
export { resolvePlugins, PluginStatus, PluginStatusToken } from './resolution';
export { pluginsModule } from './module';
export { ProtoContribution, ProtoRegistry } from './proto-registry';
