import { ContainerModule } from 'inversify';
import { MeshConfig, MeshNetworks } from './mesh-config';

export function meshConfigModule(): ContainerModule {
  return new ContainerModule((bind) => {
    bind(MeshConfig).toSelf().inSingletonScope();
    bind(MeshNetworks).toSelf().inSingletonScope();
  });
}
