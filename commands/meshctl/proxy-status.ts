import { command, intFlag, MeshCommand, stringFlag, withProgress } from '../../src/modules/cli';
import { podOfTarget, proxyConfigDump, proxyStatusDiff, proxyStatusList, readProxyDumpFile } from '../../src/modules/meshd-debug';
import { UserError } from '../../src/modules/shared/user-error';
import { xdsConnectionFlags } from './flag-groups';
import { outputFormatFlag } from './flag-types';
import { TARGET_USAGE, targetArgs } from './target-arg';
import { ControlPlaneFlags, withReach, withSession } from './xds-session';

// One command serves both `proxy-status` and `experimental proxy-status` (same flags and effect).
@command({
  program: 'meshctl',
  path: 'proxy-status',
  aliases: ['ps', 'experimental proxy-status', 'experimental ps'],
  summary: 'Show the last xDS sync sent to and acknowledged by each proxy; for one proxy, the difference',
  description:
    'Without a proxy: the sync status of every proxy connected to the control plane. With one ' +
    '(a pod, or deployment/<name>): what its daemon would send it compared with what the proxy ' +
    'has (its admin config dump, or --file), cluster, listener and route sections each either ' +
    'matching or shown as a unified diff.',
  usage: `proxy-status ${TARGET_USAGE}`,
  flags: {
    ...xdsConnectionFlags,
    file: stringFlag('compare against this proxy config dump (JSON; - for stdin) instead of asking the proxy', { char: 'f' }),
    revision: stringFlag('control plane revision to ask', { char: 'r' }),
    // The reference's, not in the spec's list (conformance README, proxy-config/).
    output: outputFormatFlag(['json', 'yaml']),
    verbosity: intFlag('0: the subscribed types of each proxy; 1 or more: one column per xDS type', { default: 0, min: 0 }),
  },
  args: targetArgs,
})
export class ProxyStatus extends MeshCommand {
  async run(): Promise<void> {
    const { flags, args } = await this.parse(ProxyStatus);
    const daemons = flags as unknown as ControlPlaneFlags;
    await withReach(this.scope, flags, async (reach) => {
      if (args.target !== undefined) {
        if (flags.output) throw new UserError('--output applies to the status of every proxy, not to the difference for one');
        // With --file the orchestrator is not needed for a pod named as <name>[.<namespace>].
        const pod = (flags.file && podOfTarget(args.target, flags.namespace || 'default')) || (await withProgress(`finding ${args.target}`, () => reach.resolvePod(args.target!, flags.namespace)));
        const dump = flags.file ? readProxyDumpFile(flags.file) : await withProgress(`reading the config dump of ${pod.name}.${pod.namespace}`, () => proxyConfigDump(reach, pod));
        this.write(await withSession(reach, daemons, (session) => proxyStatusDiff(session, `${pod.name}.${pod.namespace}`, dump)));
        return;
      }
      if (flags.file) throw new UserError('--file compares one proxy: name it (proxy-status <pod> --file <dump>)');
      const output = flags.output as 'json' | 'yaml' | undefined;
      process.stdout.write(await withSession(reach, daemons, (session) => proxyStatusList(session, { namespace: flags.namespace || undefined, output, verbosity: flags.verbosity })));
    });
  }
}
