import { ContainerModule } from 'inversify';
import { OrchAccess } from './orch-access';
import { PortForwarder } from './port-forwarder';

/** meshctl's access to pods through the orchestrator API (bound per command scope's OrchClientOptions). */
export function orchAccessModule(): ContainerModule {
  return new ContainerModule((bind) => {
    bind(PortForwarder).toSelf().inSingletonScope();
    bind(OrchAccess).toSelf().inSingletonScope();
  });
}
