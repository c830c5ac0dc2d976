import { inject, injectable } from 'inversify';
import { ELECTIONS, SingletonController } from '../../leader-election';
import { WorkloadAutoRegistration } from './auto-registration';

/**
 * The cleanup of auto-registered entries whose daemon is gone, as a singleton controller: it
 * deletes mesh resources, so one replica does it (the leader of the status election, which
 * writes to mesh resources).
 */
@injectable()
export class AutoRegistrationSweeper implements SingletonController {
  readonly election = ELECTIONS.statusController;
  readonly name = 'workload entry cleanup';

  constructor(@inject(WorkloadAutoRegistration) private readonly registration: WorkloadAutoRegistration) {}

  start(): void {
    this.registration.startSweeping();
  }

  stop(): void {
    this.registration.stopSweeping();
  }
}
