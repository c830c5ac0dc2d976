import { boolFlag, command, NotYetImplementedCommand, stringFlag, versionFlags } from '../../../src/modules/cli';
import { xdsConnectionFlags } from '../flag-groups';

@command({
  program: 'meshctl',
  path: 'experimental version',
  summary: 'Print build version information of meshctl and the control plane',
  flags: {
    ...xdsConnectionFlags,
    // -o yaml|json and --short, as the plain `version` takes them.
    ...versionFlags,
    remote: boolFlag('also ask the control plane; --remote=false skips that check', { default: true }),
    revision: stringFlag('control plane revision to ask', { char: 'r' }),
  },
})
export class ExperimentalVersion extends NotYetImplementedCommand {}
