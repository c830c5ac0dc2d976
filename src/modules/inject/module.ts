import { ContainerModule } from 'inversify';
import { SidecarInjector } from './injector';

export function injectModule(): ContainerModule {
  return new ContainerModule((bind) => {
    bind(SidecarInjector).toSelf().inSingletonScope();
  });
}
