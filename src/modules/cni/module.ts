import { ContainerModule } from 'inversify';
import { InstallCniNode } from './install/node-agent';

/** The node installer, resolved by `install-cni` with its flags bound. */
export function cniModule(): ContainerModule {
  return new ContainerModule((bind) => {
    bind(InstallCniNode).toSelf().inSingletonScope();
  });
}
