import { ContainerModule } from 'inversify';
import { MeshConfig } from './mesh-config';

export function meshConfigModule(): ContainerModule {
  return new ContainerModule((bind) => {
    bind(MeshConfig).toSelf().inSingletonScope();
  });
}
