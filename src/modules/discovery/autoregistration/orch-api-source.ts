import { orchLibrary } from '../../orch';
import { inject, injectable } from 'inversify';
import { OrchClient } from '../../orch';
import { Settings, SettingsToken } from '../../settings';
import { DaemonFlags, DaemonFlagsToken } from '../daemon-flags';
import { orchestratorConfigured } from '../orch-options';
import { CustomObjectsWorkloadEntryApi, WorkloadEntryApi, WorkloadEntryApiSource } from './workload-entry-api';

/** The daemon's orchestrator client (rate-limited like all its calls), when it has an orchestrator. */
@injectable()
export class OrchWorkloadEntryApiSource implements WorkloadEntryApiSource {
  constructor(
    @inject(DaemonFlagsToken) private readonly flags: DaemonFlags,
    @inject(SettingsToken) private readonly settings: Settings,
    @inject(OrchClient) private readonly client: OrchClient,
  ) {}

  api(): WorkloadEntryApi | undefined {
    if (!orchestratorConfigured(this.flags, this.settings)) return undefined;
    return new CustomObjectsWorkloadEntryApi(this.client.api(orchLibrary().CustomObjectsApi));
  }
}
