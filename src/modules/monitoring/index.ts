export * from './metrics';
export { ListenAddress, parseListenAddress, formatListenAddress, listenOn } from './listen-address';
export { MonitoringServer, MonitoringServerOptions, MetricsSource, isLoopbackAddress } from './monitoring-server';
