import { command, stringFlag } from '../../../src/modules/cli';
import { xdsConnectionFlags } from '../flag-groups';
import { Version } from '../version';

/** `version` that reaches the control plane over xDS (the connection flags), not the orchestrator. */
@command({
  program: 'meshctl',
  path: 'experimental version',
  summary: 'Print build version information of meshctl and the control plane',
  flags: {
    ...xdsConnectionFlags,
    revision: stringFlag('control plane revision to ask', { char: 'r' }),
  },
})
export class ExperimentalVersion extends Version {}
