import { inject, injectable } from 'inversify';
import { BuildInfo, BuildInfoToken } from '../build-info';
import { LeaderElectionOptions, LeaderElectionOptionsToken } from '../leader-election';
import { Settings, SettingsToken } from '../settings';
import { revisionName } from '../webhook';

/**
 * Who this daemon is among the control plane's replicas, as clients are told: the component,
 * the replica's identity (the Lease holder's: POD_NAME, else the host and a random suffix),
 * its revision (REVISION) and its build. Every xDS response carries it as
 * `control_plane.identifier`, in the incumbent's JSON shape, so `proxy-status` can say which
 * replica serves each proxy and `version --remote` which build each runs.
 */
@injectable()
export class ControlPlaneInstance {
  readonly component = 'meshd';
  readonly id: string;
  readonly revision: string;

  constructor(
    @inject(BuildInfoToken) readonly info: BuildInfo,
    @inject(LeaderElectionOptionsToken) election: LeaderElectionOptions,
    @inject(SettingsToken) settings: Settings,
  ) {
    this.id = election.identity;
    this.revision = revisionName(settings.string('REVISION'));
  }

  /** `{"Component":"meshd","ID":...,"Info":{...}}`: the incumbent's control-plane identifier, plus the revision. */
  identifier(): string {
    return JSON.stringify({ Component: this.component, ID: this.id, Revision: this.revision, Info: this.info });
  }

  /** The `version` debug answer: the identifier's fields and the revision. */
  describe(): { Component: string; ID: string; Revision: string; Info: BuildInfo } {
    return { Component: this.component, ID: this.id, Revision: this.revision, Info: this.info };
  }
}
