export * from './metrics';
export { DeferredMetrics, labelsOf } from './deferred-metrics';
export { ListenAddress, ListenAddressError, parseListenAddress, formatListenAddress, listenOn } from './listen-address';
export { MonitoringServer, MonitoringServerOptions, MonitoringServerOptionsToken, MetricsSource, isLoopbackAddress } from './monitoring-server';
export { monitoringModule } from './module';
