import { ContainerModule } from 'inversify';
import { declareContributionPoint } from '../plugins/contribution-provider';
import { CommandContribution } from './contributions';

/** The command framework's contribution point: commands plugins add to a program's tree. */
export function cliModule(): ContainerModule {
  return new ContainerModule((bind) => {
    declareContributionPoint(bind, CommandContribution);
  });
}
