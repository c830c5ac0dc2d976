import { ContainerModule } from 'inversify';
import { declareContributionPoint } from '../plugins/contribution-provider';
import { SingletonController, SingletonControllers } from './singleton-controllers';

/** Leader election for the singleton controllers; the program binds LeaderElectionOptionsToken. */
export function leaderElectionModule(): ContainerModule {
  return new ContainerModule((bind) => {
    declareContributionPoint(bind, SingletonController);
    bind(SingletonControllers).toSelf().inSingletonScope();
  });
}
