export * from './metrics';
export { ListenAddress, ListenAddressError, parseListenAddress, formatListenAddress, listenOn } from './listen-address';
export { MonitoringServer, MonitoringServerOptions, MetricsSource, isLoopbackAddress } from './monitoring-server';
