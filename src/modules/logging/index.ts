export * from './levels';
export * from './options';
export { Logging, LoggingToken, ScopedLogger, LogFields, ScopeState, UnknownScopeError } from './logging';
export { SCOPE_DESCRIPTIONS } from './scope-descriptions';
export { loggingFlags, vklogFlag } from './flags';
export { loggingModule } from './module';
