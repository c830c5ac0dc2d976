import { Args } from '@oclif/core';
import { boolFlag, command, MeshCommand, stringFlag } from '../../../src/modules/cli';
import { internalDebug } from '../../../src/modules/meshd-debug';
import { UserError } from '../../../src/modules/shared/user-error';
import { xdsConnectionFlags } from '../flag-groups';
import { ControlPlaneFlags, withReach, withSession } from '../xds-session';

@command({
  program: 'meshctl',
  path: 'experimental internal-debug',
  summary: 'Fetch debug information, such as syncz, from the control plane',
  description:
    'Asks the control-plane daemon for one of its debug pages over xDS: syncz, configz, ' +
    'registryz, config_files, plugins, version, config_dump?proxyID=<pod>.<namespace>, or list ' +
    '(the pages it has). Prints the JSON of the first daemon that has the answer, or with --all ' +
    "every daemon's under its instance ID.",
  usage: 'experimental internal-debug <debug type>[?<query>]',
  flags: {
    ...xdsConnectionFlags,
    all: boolFlag('send the same request to every control-plane daemon instance'),
    revision: stringFlag('control plane revision to ask', { char: 'r' }),
  },
  args: { type: Args.string({ required: false, description: 'debug type, e.g. syncz or config_dump?proxyID=<pod>.<namespace>' }) },
})
export class ExperimentalInternalDebug extends MeshCommand {
  async run(): Promise<void> {
    const { flags, args } = await this.parse(ExperimentalInternalDebug);
    if (!args.type) throw new UserError('debug type is required, e.g. syncz (internal-debug list shows them all)');
    const type = args.type;
    const text = await withReach(this.scope, flags, (reach) => withSession(reach, flags as unknown as ControlPlaneFlags, (session) => internalDebug(session, type, flags.all ?? false)));
    process.stdout.write(text);
  }
}
