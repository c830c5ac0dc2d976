import { ContainerModule } from 'inversify';
import { ServiceRegistries } from './registries';

export function registryModule(): ContainerModule {
  return new ContainerModule((bind) => {
    bind(ServiceRegistries).toSelf().inSingletonScope();
  });
}
