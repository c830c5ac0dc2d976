export * from './levels';
export * from './options';
export { Logging, LoggingToken, ScopedLogger, LogFields } from './logging';
export { loggingFlags, vklogFlag } from './flags';
export { loggingModule } from './module';
