export { BuiltInProxy, BuiltInProxyOptions, ProxyLog, AppliedConfig } from './builtin-proxy';
export { ProxyHttpFilterFactory, ProxyNetworkFilterFactory } from './contributions';
export { acceptOnlyHttpFilter, acceptOnlyNetworkFilter } from './filters/accept-only';
export * from './http/filter-api';
export { proxyModule } from './module';
