import { command, intFlag, MeshCommand, stringFlag } from '../../src/modules/cli';
import { DaemonSession, OrchReach, podOfTarget, proxyConfigDump, proxyStatusDiff, proxyStatusList, readProxyDumpFile, XdsConnectionFlags } from '../../src/modules/meshd-debug';
import { UserError } from '../../src/modules/shared/user-error';
import { xdsConnectionFlags } from './flag-groups';
import { outputFormatFlag } from './flag-types';
import { TARGET_USAGE, targetArgs } from './target-arg';
import { controlPlaneReach } from './xds-session';

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
    const reach = controlPlaneReach(this.scope, flags);
    if (args.target !== undefined) {
      if (flags.output) throw new UserError('--output applies to the status of every proxy, not to the difference for one');
      // Without the orchestrator (--file with --xds-address), the pod is read from the argument.
      const pod = flags.file ? podOfTarget(args.target, flags.namespace || 'default') ?? (await reach.resolvePod(args.target, flags.namespace)) : await reach.resolvePod(args.target, flags.namespace);
      const dump = flags.file ? readProxyDumpFile(flags.file) : await proxyConfigDump(reach, pod);
      await this.withSession(flags, reach, async (session) => this.write(await proxyStatusDiff(session, `${pod.name}.${pod.namespace}`, dump)));
      return;
    }
    if (flags.file) throw new UserError('--file compares one proxy: name it (proxy-status <pod> --file <dump>)');
    await this.withSession(flags, reach, async (session) => {
      process.stdout.write(await proxyStatusList(session, { namespace: flags.namespace || undefined, output: flags.output as 'json' | 'yaml' | undefined, verbosity: flags.verbosity }));
    });
  }

  private async withSession(flags: Record<string, unknown>, reach: OrchReach, work: (s: DaemonSession) => Promise<void>): Promise<void> {
    const session = await DaemonSession.open({ flags: flags as unknown as XdsConnectionFlags, meshNamespace: String(flags.meshNamespace), revision: (flags.revision as string) || undefined, reach: () => reach });
    try {
      await work(session);
    } finally {
      await session.close();
    }
  }
}
