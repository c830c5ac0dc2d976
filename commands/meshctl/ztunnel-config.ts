import { Command } from '@oclif/core';
import { boolFlag, command, GroupCommand, MeshCommand, stringFlag, withProgress } from '../../src/modules/cli';
import { OrchClientOptionsToken } from '../../src/modules/orch';
import { MeshctlOrchFlags, meshctlOrchOptions, OrchAccess } from '../../src/modules/orch-access';
import {
  allSummary,
  certificatesData,
  certificatesTable,
  checkOneZtunnelSource,
  chooseZtunnelPods,
  connectionsData,
  connectionsTable,
  fetchZtunnelDump,
  policiesData,
  podName,
  policiesTable,
  readZtunnelDumpFile,
  renderOutput,
  servicesData,
  servicesTable,
  workloadsData,
  workloadsTable,
  ZtunnelChoice,
  ZtunnelDump,
  ztunnelLogging,
  ztunnelLogRequest,
  ZtunnelOutput,
} from '../../src/modules/ztunnel-dump';
import { proxyLogLevelFlags, ztunnelFlags } from './flag-groups';
import { TARGET_USAGE, targetArgs } from './target-arg';

const workloadNamespace = { 'workload-namespace': stringFlag('only show entries of workloads in this namespace') };

type Output = ZtunnelOutput;
type Flags = MeshctlOrchFlags &
  Record<string, unknown> & { file?: string; node?: string; output?: string; 'proxy-admin-port': number; namespace?: string; meshNamespace: string };

function usage(subcommand: string): string {
  return `ztunnel-config ${subcommand} ${TARGET_USAGE}`;
}

/** Reaches ztunnel pods through the orchestrator API; commands close it when done. */
abstract class ZtunnelCommand extends MeshCommand {
  protected orchAccess(flags: Flags): OrchAccess {
    return this.scope.resolve(OrchAccess, [[OrchClientOptionsToken, meshctlOrchOptions(flags)]]);
  }

  protected choice(flags: Flags, target: string | undefined): ZtunnelChoice {
    return { target, node: flags.node, namespace: flags.namespace, meshNamespace: flags.meshNamespace };
  }
}

/** A ztunnel-config subcommand showing part of a ztunnel's config dump (`--file`, or the pod's admin port). */
abstract class ZtunnelDumpCommand extends ZtunnelCommand {
  /** The part shown differs from ztunnel to ztunnel: without a pod or --node, only one may run. */
  protected readonly perZtunnel: boolean = false;

  async run(): Promise<void> {
    const { args, flags } = await this.parse(this.constructor as Command.Class);
    const f = flags as unknown as Flags;
    const target = (args as { target?: string }).target;
    checkOneZtunnelSource({ file: f.file, node: f.node, target });
    const dump = f.file ? await readZtunnelDumpFile(f.file) : await this.fetch(f, target);
    process.stdout.write(this.render(dump, (f.output ?? 'short') as Output, f));
  }

  private async fetch(flags: Flags, target: string | undefined): Promise<ZtunnelDump> {
    const access = this.orchAccess(flags);
    try {
      const [pod] = await withProgress('finding the ztunnel', () => chooseZtunnelPods(access, this.choice(flags, target), { single: this.perZtunnel }));
      return await withProgress(`reading the config dump of ztunnel ${podName(pod)}`, () => fetchZtunnelDump(access, pod, flags['proxy-admin-port']));
    } finally {
      await access.close();
    }
  }

  /** The text to print for this dump. */
  protected abstract render(dump: ZtunnelDump, output: Output, flags: Flags): string;
}

@command({
  program: 'meshctl',
  path: 'ztunnel-config',
  summary: 'Read or update the configuration of node proxies (ztunnel)',
  group: true,
})
export class ZtunnelConfig extends GroupCommand {}

@command({
  program: 'meshctl',
  path: 'ztunnel-config all',
  summary: 'Show all configuration of a ztunnel',
  usage: usage('all'),
  flags: ztunnelFlags,
  args: targetArgs,
})
export class ZtunnelConfigAll extends ZtunnelDumpCommand {
  protected render(dump: ZtunnelDump, output: Output): string {
    return renderOutput(output, () => allSummary(dump), () => dump.raw);
  }
}

@command({
  program: 'meshctl',
  path: 'ztunnel-config certificate',
  aliases: ['certificates', 'certs', 'cert'],
  summary: 'Show the certificates of a ztunnel',
  usage: usage('certificate'),
  flags: ztunnelFlags,
  args: targetArgs,
})
export class ZtunnelConfigCertificate extends ZtunnelDumpCommand {
  protected override readonly perZtunnel = true;

  protected render(dump: ZtunnelDump, output: Output): string {
    return renderOutput(output, () => certificatesTable(dump), () => certificatesData(dump));
  }
}

@command({
  program: 'meshctl',
  path: 'ztunnel-config connections',
  aliases: ['cons'],
  summary: 'Show the connections of a ztunnel',
  usage: usage('connections'),
  flags: {
    ...ztunnelFlags,
    direction: stringFlag('only show connections of this direction', { options: ['inbound', 'outbound'] }),
    raw: boolFlag('show IP addresses instead of names'),
    ...workloadNamespace,
  },
  args: targetArgs,
})
export class ZtunnelConfigConnections extends ZtunnelDumpCommand {
  protected override readonly perZtunnel = true;

  protected render(dump: ZtunnelDump, output: Output, flags: Flags): string {
    const filter = { namespace: flags['workload-namespace'] as string | undefined, direction: flags.direction as 'inbound' | 'outbound' | undefined, raw: flags.raw === true };
    return renderOutput(output, () => connectionsTable(dump, filter), () => connectionsData(dump, filter));
  }
}

@command({
  program: 'meshctl',
  path: 'ztunnel-config log',
  aliases: ['o'],
  summary: 'Show the logging levels of a ztunnel, optionally updating them',
  usage: usage('log'),
  flags: { ...ztunnelFlags, ...proxyLogLevelFlags },
  args: targetArgs,
})
export class ZtunnelConfigLog extends ZtunnelCommand {
  async run(): Promise<void> {
    const { args, flags } = await this.parse(ZtunnelConfigLog);
    const f = flags as unknown as Flags;
    if (f.file) this.fail('--file does not apply to ztunnel-config log: log levels are read from and set on running ztunnels');
    if (f.output !== 'short') this.fail('--output does not apply to ztunnel-config log');
    checkOneZtunnelSource({ node: f.node, target: args.target });
    const request = ztunnelLogRequest({ level: f.level as string | undefined, reset: f.reset === true });
    const access = this.orchAccess(f);
    try {
      const pods = await withProgress('finding the ztunnels', () => chooseZtunnelPods(access, this.choice(f, args.target), { all: true }));
      await ztunnelLogging(access, pods, f['proxy-admin-port'], request, (text) => process.stdout.write(text));
    } finally {
      await access.close();
    }
  }
}

@command({
  program: 'meshctl',
  path: 'ztunnel-config policy',
  aliases: ['policies', 'p', 'pol'],
  summary: 'Show the policies of a ztunnel',
  usage: usage('policy'),
  flags: { ...ztunnelFlags, 'policy-namespace': stringFlag('only show policies of this namespace') },
  args: targetArgs,
})
export class ZtunnelConfigPolicy extends ZtunnelDumpCommand {
  protected render(dump: ZtunnelDump, output: Output, flags: Flags): string {
    const namespace = flags['policy-namespace'] as string | undefined;
    return renderOutput(output, () => policiesTable(dump, namespace), () => policiesData(dump, namespace));
  }
}

@command({
  program: 'meshctl',
  path: 'ztunnel-config service',
  aliases: ['services', 's', 'svc'],
  summary: 'Show the services known to a ztunnel',
  usage: usage('service'),
  flags: { ...ztunnelFlags, 'service-namespace': stringFlag('only show services of this namespace') },
  args: targetArgs,
})
export class ZtunnelConfigService extends ZtunnelDumpCommand {
  protected render(dump: ZtunnelDump, output: Output, flags: Flags): string {
    const namespace = flags['service-namespace'] as string | undefined;
    return renderOutput(output, () => servicesTable(dump, namespace), () => servicesData(dump, namespace));
  }
}

@command({
  program: 'meshctl',
  path: 'ztunnel-config workload',
  aliases: ['workloads', 'w'],
  summary: 'Show the workloads known to a ztunnel',
  usage: usage('workload'),
  flags: {
    ...ztunnelFlags,
    address: stringFlag('only show the workload with this address'),
    ...workloadNamespace,
    'workload-node': stringFlag('only show workloads on this node'),
  },
  args: targetArgs,
})
export class ZtunnelConfigWorkload extends ZtunnelDumpCommand {
  protected render(dump: ZtunnelDump, output: Output, flags: Flags): string {
    const filter = { address: flags.address as string | undefined, namespace: flags['workload-namespace'] as string | undefined, node: flags['workload-node'] as string | undefined };
    return renderOutput(output, () => workloadsTable(dump, filter), () => workloadsData(dump, filter));
  }
}
