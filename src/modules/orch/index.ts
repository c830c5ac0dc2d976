export { loadOrchConfig, orchConfigFor, orchConfigFromText, OrchConfigError } from './config';
export { OrchApiError, statusCodeOf } from './api-error';
export { OrchClient, OrchClientOptions, OrchClientOptionsToken } from './client';
export { Informer, InformerHandlers, InformerObserver, InformerOptions, InformerTransport, ListPage } from './informer';
export { OrchMetrics, WatchEvent } from './metrics';
export { orchModule } from './module';
export { TokenBucket, RateLimiterStoppedError } from './rate-limiter';
export { apiVersionOf, collectionPath, CONFIG_MAPS, describeResource, ENDPOINT_SLICES, NAMESPACES, NODES, objectKey, OrchObject, OrchResource, PODS, SECRETS, SERVICES } from './resources';
export { KeyedQueue, QueueObserver } from './work-queue';
