export { ControlzServer, ControlzOptions, ControlzOptionsToken } from './server';
export { ctrlzListenAddress } from './address';
export { ScopeInfo, ScopeUpdate, SETTABLE_LEVELS, SettableLevel, isSettableLevel, SCOPES_API_PATH } from './scope-info';
export { InProcessProfiler, ProfilerBusyError, ProfileAbortedError } from './pprof/profiler';
export { pprofResponse, isPprofPath, PprofResponse, PPROF_PREFIX, PROFILING_OFF, DEFAULT_CPU_SECONDS, MAX_CPU_SECONDS } from './pprof/http';
export { MetricsJsonSource } from './topics';
export { ctrlzModule } from './module';
