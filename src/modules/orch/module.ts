import { ContainerModule } from 'inversify';
import { OrchClient } from './client';
import { DefaultOrchConfigFile } from './default-config';
import { OrchMetrics } from './metrics';

/** The orchestrator client (bound to the options a program binds) and its metrics. */
export function orchModule(): ContainerModule {
  return new ContainerModule((bind) => {
    bind(OrchMetrics).toSelf().inSingletonScope();
    bind(OrchClient).toSelf().inSingletonScope();
    bind(DefaultOrchConfigFile).toSelf().inSingletonScope();
  });
}
