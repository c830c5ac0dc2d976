export { DebugHttpServer, DebugHttpServerOptions, DebugHttpServerOptionsToken, DebugHandler, DebugResponse, Readiness } from './debug-server';
export { configzHandler, registryzHandler, pluginsHandler, PluginView } from './handlers';
