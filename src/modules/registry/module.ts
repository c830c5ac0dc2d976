import { ContainerModule } from 'inversify';
import { OrchRegistryMetrics, OrchServiceRegistry } from './orch';
import { ServiceRegistries } from './registries';

export function registryModule(): ContainerModule {
  return new ContainerModule((bind) => {
    bind(ServiceRegistries).toSelf().inSingletonScope();
    // Made only by a program that binds OrchRegistryOptionsToken and the orchestrator client's options.
    bind(OrchRegistryMetrics).toSelf().inSingletonScope();
    bind(OrchServiceRegistry).toSelf().inSingletonScope();
  });
}
