import { command, NotYetImplementedCommand, stringFlag } from '../../../src/modules/cli';
import { TARGET_USAGE, targetArgs } from '../target-arg';

@command({
  program: 'meshctl',
  path: 'experimental check-inject',
  summary: 'Tell whether a pod can be, or will be, injected with the sidecar',
  usage: `experimental check-inject ${TARGET_USAGE}`,
  flags: { labels: stringFlag('pod labels to check against instead of a pod, as key=value,...', { char: 'l' }) },
  args: targetArgs,
})
export class ExperimentalCheckInject extends NotYetImplementedCommand {}
