import { ContainerModule } from 'inversify';
import { AuthzSimulator } from './simulator';

/** The policy simulator; built per command from the generators and the built-in proxy of the container. */
export function authzSimModule(): ContainerModule {
  return new ContainerModule((bind) => {
    bind(AuthzSimulator).toSelf().inTransientScope();
  });
}
