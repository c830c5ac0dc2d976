import { Command } from '@oclif/core';
import { boolFlag, command, GroupCommand, MeshCommand, stringFlag } from '../../src/modules/cli';
import {
  allSummary,
  certificatesData,
  certificatesTable,
  checkOneZtunnelSource,
  connectionsData,
  connectionsTable,
  policiesData,
  policiesTable,
  readZtunnelDumpFile,
  renderOutput,
  servicesData,
  servicesTable,
  workloadsData,
  workloadsTable,
  ZtunnelDump,
  ZtunnelOutput,
} from '../../src/modules/ztunnel-dump';
import { proxyLogLevelFlags, ztunnelFlags } from './flag-groups';
import { TARGET_USAGE, targetArgs } from './target-arg';

const workloadNamespace = { 'workload-namespace': stringFlag('only show entries of workloads in this namespace') };

type Output = ZtunnelOutput;
type Flags = Record<string, unknown> & { file?: string; node?: string; output?: string; 'proxy-admin-port'?: number };

function usage(subcommand: string): string {
  return `ztunnel-config ${subcommand} ${TARGET_USAGE}`;
}

/** A ztunnel-config subcommand showing part of a ztunnel's config dump (`--file`, or the pod's admin port). */
abstract class ZtunnelDumpCommand extends MeshCommand {
  async run(): Promise<void> {
    const { args, flags } = await this.parse(this.constructor as Command.Class);
    const f = flags as Flags;
    const target = (args as { target?: string }).target;
    checkOneZtunnelSource({ file: f.file, node: f.node, target });
    if (!f.file) this.fail(`${this.commandLine} without --file needs the orchestrator API to reach the ztunnel, which is not built yet; pass a saved config dump with --file`);
    const dump = await readZtunnelDumpFile(f.file);
    process.stdout.write(this.render(dump, (f.output ?? 'short') as Output, f));
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
export class ZtunnelConfigLog extends MeshCommand {
  async run(): Promise<void> {
    await this.parse(ZtunnelConfigLog);
    this.fail(`${this.commandLine} needs the orchestrator API to reach the ztunnel, which is not built yet`);
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
