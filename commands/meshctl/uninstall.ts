import { boolFlag, command, NotYetImplementedCommand, stringFlag } from '../../src/modules/cli';
import { installSetFlags, pickFlags } from './flag-groups';

@command({
  program: 'meshctl',
  path: 'uninstall',
  summary: 'Remove the mesh from the cluster',
  flags: {
    // A single file here, unlike the install-set group's repeatable --filename.
    filename: stringFlag('operator custom resource file of the install to remove', { char: 'f' }),
    purge: boolFlag('remove every mesh resource, of every version'),
    'skip-confirmation': boolFlag('do not ask for confirmation', { char: 'y' }),
    verbose: boolFlag('verbose output', { char: 'v' }),
    ...pickFlags(installSetFlags, 'manifests', 'revision', 'set', 'dry-run', 'force'),
  },
})
export class Uninstall extends NotYetImplementedCommand {}
