import { command, stringFlag } from '../../../src/modules/cli';
import { xdsConnectionFlags } from '../flag-groups';
import { Version } from '../version';

/** `version` that reaches the control plane with the XDS-connection flags. */
@command({
  program: 'meshctl',
  path: 'experimental version',
  summary: 'Print build version information of meshctl, the control plane and the proxies',
  flags: {
    ...xdsConnectionFlags,
    revision: stringFlag('control plane revision to ask', { char: 'r' }),
  },
})
export class ExperimentalVersion extends Version {}
