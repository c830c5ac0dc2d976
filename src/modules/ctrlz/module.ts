import { ContainerModule } from 'inversify';
import { InProcessProfiler } from './pprof/profiler';
import { ControlzServer } from './server';

/** The introspection facility and the profiler; whoever runs it binds ControlzOptionsToken. */
export function ctrlzModule(): ContainerModule {
  return new ContainerModule((bind) => {
    bind(InProcessProfiler).toSelf().inSingletonScope();
    bind(ControlzServer).toSelf().inSingletonScope();
  });
}
