import { command, NotYetImplementedCommand, stringFlag } from '../../src/modules/cli';
import { xdsConnectionFlags } from './flag-groups';
import { TARGET_USAGE, targetArgs } from './target-arg';

// One command serves both `proxy-status` and `experimental proxy-status` (same flags and effect).
@command({
  program: 'meshctl',
  path: 'proxy-status',
  aliases: ['ps', 'experimental proxy-status', 'experimental ps'],
  summary: 'Show the last xDS sync sent to and acknowledged by each proxy; for one proxy, the difference',
  usage: `proxy-status ${TARGET_USAGE}`,
  flags: {
    ...xdsConnectionFlags,
    file: stringFlag('compare against this proxy config dump (JSON) instead of asking the proxy', { char: 'f' }),
    revision: stringFlag('control plane revision to ask', { char: 'r' }),
  },
  args: targetArgs,
})
export class ProxyStatus extends NotYetImplementedCommand {}
