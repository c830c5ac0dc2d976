import { ContainerModule } from 'inversify';
import { DebugHttpServer } from './debug-server';

/** The HTTP server of `/ready` and `/debug/*`; whoever runs it binds DebugHttpServerOptionsToken. */
export function debugModule(): ContainerModule {
  return new ContainerModule((bind) => {
    bind(DebugHttpServer).toSelf().inSingletonScope();
  });
}
