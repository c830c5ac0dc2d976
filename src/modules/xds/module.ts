import { ContainerModule } from 'inversify';
import { XdsServer } from './server';

/** The ADS server; whoever runs it binds XdsServerOptionsToken (the daemon maps its flags and settings). */
export function xdsModule(): ContainerModule {
  return new ContainerModule((bind) => {
    bind(XdsServer).toSelf().inSingletonScope();
  });
}
