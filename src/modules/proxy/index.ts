export { BuiltInProxy, BuiltInProxyOptions, AppliedConfig } from './builtin-proxy';
export * from './logging/proxy-loggers';
export { ProxyHttpFilterFactory, ProxyNetworkFilterFactory } from './contributions';
export { acceptOnlyHttpFilter, acceptOnlyNetworkFilter } from './filters/accept-only';
export * from './http/filter-api';
export { proxyModule } from './module';
