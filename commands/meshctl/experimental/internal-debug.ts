import { boolFlag, command, NotYetImplementedCommand, stringFlag } from '../../../src/modules/cli';
import { xdsConnectionFlags } from '../flag-groups';
import { TARGET_USAGE, targetArgs } from '../target-arg';

@command({
  program: 'meshctl',
  path: 'experimental internal-debug',
  summary: 'Fetch debug information, such as syncz, from the control plane',
  usage: `experimental internal-debug ${TARGET_USAGE}`,
  flags: {
    ...xdsConnectionFlags,
    all: boolFlag('send the same request to every control-plane daemon instance'),
    revision: stringFlag('control plane revision to ask', { char: 'r' }),
  },
  args: targetArgs,
})
export class ExperimentalInternalDebug extends NotYetImplementedCommand {}
