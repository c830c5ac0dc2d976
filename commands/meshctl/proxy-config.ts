import { Command } from '@oclif/core';
import { boolFlag, command, GroupCommand, MeshCommand, stringFlag, uint16Flag } from '../../src/modules/cli';
import {
  allSummary,
  bootstrapData,
  clustersData,
  clustersTable,
  listenersData,
  listenersTable,
  toProtoJson,
  ConfigDump,
  ecdsData,
  ecdsTable,
  edsData,
  edsTable,
  formatData,
  hostStatusesData,
  hostStatusesTable,
  isClustersStatus,
  readConfigDump,
  readDumpData,
  routesData,
  routesTable,
  secretsData,
  secretsTable,
  versionSummary,
  ADMIN_PATHS,
  adminJson,
  applyLogLevels,
  liveConfigDump,
  parseLevelFlag,
  ProxyPod,
  renderLogLevels,
  resolveProxyPod,
  RESET_LEVEL,
  selectProxyPods,
} from '../../src/modules/proxy-dump';
import { MeshctlOrchFlags } from '../../src/modules/orch-access';
import { withOrchAccess } from './orch-access-scope';
import { outputFormatFlag } from './flag-types';
import { pickFlags, proxyConfigFlags, proxyLogLevelFlags } from './flag-groups';
import { TARGET_USAGE, targetArgs } from './target-arg';

/** The group's own flags (cobra persistent flags), which every subcommand takes. */
const groupFlags = pickFlags(proxyConfigFlags, 'output', 'proxy-admin-port');

/** Filters of the config shown; each subcommand takes those the spec lists for it. */
const filters = {
  address: stringFlag('only show entries for this address'),
  cluster: stringFlag('only show endpoints of this cluster'),
  direction: stringFlag('only show entries of this direction (inbound or outbound)'),
  fqdn: stringFlag('only show entries whose service FQDN contains this'),
  name: stringFlag('only show the route of this name'),
  port: uint16Flag('only show entries for this port; 0 shows all', { default: 0 }),
  status: stringFlag('only show endpoints with this health status'),
  subset: stringFlag('only show entries whose subset contains this'),
  type: stringFlag('only show listeners of this type'),
  verbose: boolFlag('show more information'),
};

type Output = 'short' | 'json' | 'yaml';
type Flags = Record<string, unknown> & MeshctlOrchFlags & { file?: string; output?: string; namespace?: string; 'proxy-admin-port'?: number };

/**
 * A proxy-config subcommand: reads the named pod's proxy through a port-forward to its admin
 * port (`--proxy-admin-port`), or a saved config dump (`-f`) without the orchestrator API.
 */
abstract class ProxyDumpCommand extends MeshCommand {
  /** What the live proxy is asked (ADMIN_PATHS). */
  protected abstract readonly adminPath: string;

  async run(): Promise<void> {
    const { flags, args } = await this.parse(this.constructor as Command.Class);
    const f = flags as Flags;
    const target = (args as { target?: string }).target;
    const name = this.meta.path.split(' ').pop();
    if (target === undefined && !f.file) this.fail(`${name} requires pod name or --file parameter`);
    if (target !== undefined && f.file) this.fail(`${name} takes a pod name or --file, not both`);
    const output = (f.output ?? 'short') as Output;
    if (f.file) {
      this.write(this.renderFile(f.file, output, f));
      return;
    }
    const text = await withOrchAccess(this.scope, f, async (access) => {
      const pod = await resolveProxyPod(access, target!, f.namespace, f['proxy-admin-port'] ?? 15000);
      return this.renderLive(pod, output, f);
    }, `reading the proxy of ${target} through the orchestrator API`);
    this.write(text);
  }

  protected renderFile(file: string, output: Output, flags: Flags): string {
    return this.render(readConfigDump(file), output, flags);
  }

  protected async renderLive(pod: ProxyPod, output: Output, flags: Flags): Promise<string> {
    return this.render(await liveConfigDump(pod.call, this.adminPath, pod.source), output, flags);
  }

  /** The text to print for this dump. */
  protected abstract render(dump: ConfigDump, output: Output, flags: Flags): string;
}

/** `-o short` prints `table`, json and yaml print `data`. */
function shortOrData(output: Output, table: () => string, data: () => unknown): string {
  return output === 'short' ? table() : formatData(data(), output);
}

function edsFilter(flags: Flags) {
  return { address: flags.address as string | undefined, cluster: flags.cluster as string | undefined, port: flags.port as number | undefined, status: flags.status as string | undefined };
}

function clusterFilter(flags: Flags) {
  return { fqdn: flags.fqdn as string | undefined, port: flags.port as number | undefined, subset: flags.subset as string | undefined, direction: flags.direction as string | undefined };
}

function pcUsage(subcommand: string): string {
  return `proxy-config ${subcommand} ${TARGET_USAGE}`;
}

@command({
  program: 'meshctl',
  path: 'proxy-config',
  summary: "Read a proxy's configuration from its config dump",
  flags: groupFlags,
  group: true,
})
export class ProxyConfig extends GroupCommand {}

@command({
  program: 'meshctl',
  path: 'proxy-config all',
  aliases: ['a'],
  summary: 'Show all configuration of a proxy',
  usage: pcUsage('all'),
  flags: {
    ...proxyConfigFlags,
    ...pickFlags(filters, 'address', 'direction', 'fqdn', 'name', 'port', 'subset', 'type', 'verbose'),
    'with-headers': boolFlag('print a "------ <KIND> INFO ------" line before each table'),
  },
  args: targetArgs,
})
export class ProxyConfigAll extends ProxyDumpCommand {
  protected readonly adminPath = ADMIN_PATHS.all;

  protected render(dump: ConfigDump, output: Output, flags: Flags): string {
    const filter = { ...clusterFilter(flags), address: flags.address as string | undefined, type: flags.type as string | undefined, name: flags.name as string | undefined };
    return shortOrData(output, () => allSummary(dump, filter, flags['with-headers'] === true), () => toProtoJson({ configs: dump.configs }));
  }
}

@command({
  program: 'meshctl',
  path: 'proxy-config bootstrap',
  aliases: ['b'],
  summary: 'Show the bootstrap configuration of a proxy; -o short shows a version summary',
  usage: pcUsage('bootstrap'),
  // JSON by default here, unlike the other subcommands.
  flags: { ...proxyConfigFlags, output: outputFormatFlag(['json', 'yaml', 'short'], 'json') },
  args: targetArgs,
})
export class ProxyConfigBootstrap extends ProxyDumpCommand {
  protected readonly adminPath = ADMIN_PATHS.bootstrap;

  protected render(dump: ConfigDump, output: Output): string {
    return shortOrData(output, () => versionSummary(dump), () => bootstrapData(dump));
  }
}

@command({
  program: 'meshctl',
  path: 'proxy-config cluster',
  aliases: ['clusters', 'c'],
  summary: 'Show the cluster configuration of a proxy',
  usage: pcUsage('cluster'),
  flags: { ...proxyConfigFlags, ...pickFlags(filters, 'direction', 'fqdn', 'port', 'subset') },
  args: targetArgs,
})
export class ProxyConfigCluster extends ProxyDumpCommand {
  protected readonly adminPath = ADMIN_PATHS.cluster;

  protected render(dump: ConfigDump, output: Output, flags: Flags): string {
    const filter = clusterFilter(flags);
    return shortOrData(output, () => clustersTable(dump, filter), () => clustersData(dump, filter));
  }
}

@command({
  program: 'meshctl',
  path: 'proxy-config ecds',
  aliases: ['ec'],
  summary: 'Show the typed extension configuration (ECDS) of a proxy',
  usage: pcUsage('ecds'),
  flags: proxyConfigFlags,
  args: targetArgs,
})
export class ProxyConfigEcds extends ProxyDumpCommand {
  protected readonly adminPath = ADMIN_PATHS.ecds;

  protected render(dump: ConfigDump, output: Output): string {
    return shortOrData(output, () => ecdsTable(dump), () => ecdsData(dump));
  }
}

@command({
  program: 'meshctl',
  path: 'proxy-config eds',
  summary: "Show the endpoints of the EDS section of a proxy's config dump, with their locality",
  usage: pcUsage('eds'),
  flags: { ...proxyConfigFlags, ...pickFlags(filters, 'address', 'cluster', 'port', 'status') },
  args: targetArgs,
})
export class ProxyConfigEds extends ProxyDumpCommand {
  protected readonly adminPath = ADMIN_PATHS.eds;

  protected render(dump: ConfigDump, output: Output, flags: Flags): string {
    const filter = edsFilter(flags);
    return shortOrData(output, () => edsTable(dump, filter), () => edsData(dump, filter));
  }
}

@command({
  program: 'meshctl',
  path: 'proxy-config routes',
  aliases: ['route', 'r'],
  summary: 'Show the route configuration of a proxy',
  usage: pcUsage('routes'),
  flags: { ...proxyConfigFlags, ...pickFlags(filters, 'name') },
  args: targetArgs,
})
export class ProxyConfigRoutes extends ProxyDumpCommand {
  protected readonly adminPath = ADMIN_PATHS.route;

  // Always the reference's verbose table (its default for routes), so there is no --verbose here.
  protected render(dump: ConfigDump, output: Output, flags: Flags): string {
    const name = flags.name as string | undefined;
    return shortOrData(output, () => routesTable(dump, name), () => routesData(dump, name));
  }
}

@command({
  program: 'meshctl',
  path: 'proxy-config secret',
  aliases: ['secrets', 's'],
  summary: 'Show the secrets (certificates) of a proxy',
  usage: pcUsage('secret'),
  flags: proxyConfigFlags,
  args: targetArgs,
})
export class ProxyConfigSecret extends ProxyDumpCommand {
  protected readonly adminPath = ADMIN_PATHS.secret;

  protected render(dump: ConfigDump, output: Output): string {
    return shortOrData(output, () => secretsTable(dump), () => secretsData(dump));
  }
}

@command({
  program: 'meshctl',
  path: 'proxy-config endpoint',
  aliases: ['endpoints', 'ep'],
  summary: 'Show the endpoint configuration of a proxy',
  usage: pcUsage('endpoint'),
  flags: { ...proxyConfigFlags, ...pickFlags(filters, 'address', 'cluster', 'port', 'status') },
  args: targetArgs,
})
export class ProxyConfigEndpoint extends ProxyDumpCommand {
  protected readonly adminPath = ADMIN_PATHS.endpoint;

  /** The proxy's saved `/clusters?format=json` answer, as the reference reads; else a config dump's EDS section. */
  protected override renderFile(file: string, output: Output, flags: Flags): string {
    const data = readDumpData(file);
    if (!isClustersStatus(data)) return this.render(readConfigDump(file), output, flags);
    const filter = edsFilter(flags);
    return shortOrData(output, () => hostStatusesTable(data, filter), () => hostStatusesData(data, filter));
  }

  /** Live, the proxy's `/clusters?format=json`, as the reference reads it. */
  protected override async renderLive(pod: ProxyPod, output: Output, flags: Flags): Promise<string> {
    const data = await adminJson(pod.call, this.adminPath, pod.source);
    if (!isClustersStatus(data)) this.fail(`the proxy admin of ${pod.source} answered GET ${this.adminPath} without "cluster_statuses"`);
    const filter = edsFilter(flags);
    return shortOrData(output, () => hostStatusesTable(data, filter), () => hostStatusesData(data, filter));
  }

  protected render(dump: ConfigDump, output: Output, flags: Flags): string {
    const filter = edsFilter(flags);
    return shortOrData(output, () => edsTable(dump, filter), () => edsData(dump, filter));
  }
}

@command({
  program: 'meshctl',
  path: 'proxy-config listener',
  aliases: ['listeners', 'l'],
  summary: 'Show the listener configuration of a proxy',
  usage: pcUsage('listener'),
  flags: { ...proxyConfigFlags, ...pickFlags(filters, 'address', 'port', 'type', 'verbose') },
  args: targetArgs,
})
export class ProxyConfigListener extends ProxyDumpCommand {
  protected readonly adminPath = ADMIN_PATHS.listener;

  protected render(dump: ConfigDump, output: Output, flags: Flags): string {
    const filter = { address: flags.address as string | undefined, port: flags.port as number | undefined, type: flags.type as string | undefined };
    return shortOrData(output, () => listenersTable(dump, filter, flags.verbose === true), () => listenersData(dump, filter));
  }
}

@command({
  program: 'meshctl',
  path: 'proxy-config log',
  aliases: ['o'],
  summary: 'Show the logging levels of a proxy, optionally updating them',
  usage: pcUsage('log'),
  flags: {
    ...groupFlags,
    ...proxyLogLevelFlags,
    selector: stringFlag('label selector picking the pods, instead of naming one', { char: 'l' }),
  },
  args: targetArgs,
})
export class ProxyConfigLog extends MeshCommand {
  async run(): Promise<void> {
    const { flags, args } = await this.parse(ProxyConfigLog);
    const f = flags as typeof flags & MeshctlOrchFlags & { namespace?: string };
    if (!f.selector && args.target === undefined) this.fail('log requires pod name or --selector');
    if (f.selector && args.target !== undefined) this.fail('name cannot be provided when a selector is specified');
    if (f.reset && f.level) this.fail('--level cannot be combined with --reset');
    // Checked before any request: a bad level never half-changes a proxy.
    const change = f.reset ? { all: RESET_LEVEL, loggers: new Map() } : parseLevelFlag(f.level ?? '');
    const output = (f.output ?? 'short') as 'short' | 'json' | 'yaml';
    const outcome = await withOrchAccess(this.scope, f, async (access) => {
      const port = f['proxy-admin-port'];
      const pods = f.selector ? await selectProxyPods(access, f.selector, f.namespace, port) : [await resolveProxyPod(access, args.target!, f.namespace, port)];
      return applyLogLevels(pods, change);
    }, 'asking the proxies for their logging levels');
    if (outcome.done.length > 0) process.stdout.write(renderLogLevels(outcome.done, output));
    if (outcome.errors.length > 0) this.fail(outcome.errors.join('; '));
  }
}
