import { ContainerModule } from 'inversify';
import { declareContributionPoint } from '../plugins/contribution-provider';
import { XdsConnectionListener } from './connection-listener';
import { XdsServer } from './server';

/** The ADS server; whoever runs it binds XdsServerOptionsToken (the daemon maps its flags and settings). */
export function xdsModule(): ContainerModule {
  return new ContainerModule((bind) => {
    bind(XdsServer).toSelf().inSingletonScope();
    declareContributionPoint(bind, XdsConnectionListener);
  });
}
