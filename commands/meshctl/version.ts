import { Command } from '@oclif/core';
import { inject } from 'inversify';
import { BuildInfo, BuildInfoToken } from '../../src/modules/build-info';
import { boolFlag, command, MeshCommand, stringFlag, versionFlags } from '../../src/modules/cli';
import { controlPlaneVersions, renderVersionReport, VersionReport, XdsConnectionFlags } from '../../src/modules/meshd-debug';
import { UserError } from '../../src/modules/shared/user-error';
import { ControlPlaneFlags, withReach, withSession } from './xds-session';

/** How `version` reaches the daemons when it has no XDS-connection flags: their pods, token security. */
const DEFAULT_CONNECTION: XdsConnectionFlags = { 'xds-port': 15012, timeout: { milliseconds: 30_000 } };

@command({
  program: 'meshctl',
  path: 'version',
  summary: 'Prints out build version information',
  description:
    'The client version, and with --remote (the default) the version of each control-plane ' +
    'daemon and of the proxies connected to them, asked of the daemons over xDS.',
  flags: {
    ...versionFlags,
    remote: boolFlag('use --remote=false to suppress control plane check', { default: true }),
    revision: stringFlag('control plane revision', { char: 'r', default: '' }),
  },
})
export class Version extends MeshCommand {
  @inject(BuildInfoToken) private readonly buildInfo!: BuildInfo;

  async run(): Promise<void> {
    const { flags } = await this.parse(this.constructor as Command.Class);
    const report: VersionReport = { clientVersion: this.buildInfo };
    let failure: string | undefined;
    if (flags.remote) {
      try {
        Object.assign(report, await this.askControlPlane(flags));
      } catch (err) {
        if (!(err instanceof UserError)) throw err;
        failure = err.message;
      }
    }
    process.stdout.write(renderVersionReport(report, flags.output as string | undefined, flags.short as boolean));
    // The client's version is printed either way; a control plane that could not be asked is an error.
    if (failure) throw new UserError(`control plane version: ${failure} (--remote=false checks the client only)`);
  }

  private askControlPlane(flags: Record<string, unknown>): Promise<Pick<VersionReport, 'meshVersion' | 'dataPlaneVersion'>> {
    const daemons = { ...DEFAULT_CONNECTION, ...flags } as ControlPlaneFlags;
    return withReach(this.scope, flags, (reach) => withSession(reach, daemons, (session) => controlPlaneVersions(session, daemons.revision || 'default')));
  }
}
