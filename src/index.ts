/**
 * The mesh's public API for plugin authors: the plugin decorator, contribution points,
 * the command decorator and base classes, settings and logging types.
 */
import 'reflect-metadata';
export { injectable, inject } from 'inversify';
export { meshPlugin, PluginOptions } from './modules/plugins';
export { command, CommandContribution, MeshCommand, GroupCommand, CommandError } from './modules/cli';
export * as flags from './modules/cli/flags';
export { Settings, SettingsToken, Duration, SettingDefinition } from './modules/settings';
export { Logging, LoggingToken, ScopedLogger } from './modules/logging';
export {
  NetworkFilterContributor,
  HttpFilterContributor,
  HttpConnectionManagerContributor,
  ClusterContributor,
  EndpointContributor,
  FilterChainContext,
  EnvoyFilter,
  XdsGenerator,
  XdsGeneratorToken,
  NamedGenerator,
} from './modules/model/generator';
export { PushContext, Proxy } from './modules/model';
export { Service, ServicePort, ServiceEndpoint } from './modules/registry';
