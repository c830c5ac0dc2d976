import { ContainerModule } from 'inversify';
import { Agent } from './agent';

/** The agent, resolved by `pilot-agent proxy` with its flags bound (AgentFlagsToken). */
export function agentModule(): ContainerModule {
  return new ContainerModule((bind) => {
    bind(Agent).toSelf().inSingletonScope();
  });
}
