/**
 * The mesh's public API for plugin authors: the plugin decorator, contribution points (the
 * daemon's generators, the built-in proxy's filters, plugin protos), the built-in proxy's filter
 * API, the command decorator and base classes, settings and logging types. A plugin imports
 * only this (`import { meshPlugin } from 'mesh'`); examples/plugins/ shows one.
 */
import 'reflect-metadata';
export { injectable, inject } from 'inversify';
export { meshPlugin, PluginOptions, PluginPhase, ProtoContribution } from './modules/plugins';
export { typeUrlOf } from './modules/envoy/type-urls';
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
export { ProxyHttpFilterFactory, ProxyNetworkFilterFactory, ProxyTransportSocketFactory } from './modules/proxy/contributions';
export { DownstreamTransport, UpstreamTransport, TransportSocketContext, TransportSocketFactory } from './modules/proxy/tls/transport-sockets';
export { MeshTlsAlpnContributor } from './modules/security/mtls/alpn';
export {
  HttpFilter,
  HttpFilterFactory,
  NetworkFilter,
  NetworkFilterFactory,
  FilterContext,
  FilterOutcome,
  CONTINUE,
  passRequest,
  ProxyHttpRequest,
  ProxyHttpResponse,
  ConnectionInfo,
} from './modules/proxy/http/filter-api';
