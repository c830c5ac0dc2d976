import { boolFlag, command, NotYetImplementedCommand, stringFlag } from '../../../src/modules/cli';
import { outputFormatFlag, severityFlag } from '../flag-types';

@command({
  program: 'meshctl',
  path: 'experimental precheck',
  summary: 'Check that the cluster meets the requirements to install or upgrade the mesh',
  flags: {
    'from-version': stringFlag('version being upgraded from, to check the upgrade from it', { char: 'f' }),
    output: outputFormatFlag(['log', 'json', 'yaml'], 'log'),
    'output-threshold': severityFlag('lowest message severity to display', 'Warning'),
    revision: stringFlag('control plane revision to check', { char: 'r' }),
    'skip-controlplane': boolFlag('skip the checks of the control plane'),
  },
})
export class ExperimentalPrecheck extends NotYetImplementedCommand {}
