export { BuiltInProxy, BuiltInProxyOptions, BuiltInProxyView, AppliedConfig, ClusterStatus, ConfigApply, ConfigFeed } from './builtin-proxy';
export * from './logging/proxy-loggers';
export { ProxyHttpFilterFactory, ProxyNetworkFilterFactory } from './contributions';
export { acceptOnlyHttpFilter, acceptOnlyNetworkFilter } from './filters/accept-only';
export * from './http/filter-api';
export { proxyModule } from './module';
export { ListenerProbe, ProbeRequest, ProbeResult, ProbeVerdict } from './listeners/listener-probe';
export type { IncomingRequest, Admission } from './http/connection-manager';
export * from './filters';
