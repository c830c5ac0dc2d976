import { inject } from 'inversify';
import { analyzeConfiguration, EXIT_ANALYZER_FOUND_ISSUES, AnalyzerRegistry, AnalysisObject, ClusterInputs, listAnalyzers, MessageLevel, readClusterObjects } from '../../src/modules/analyze';
import { boolFlag, command, durationFlag, MeshCommand, sliceFlag, stringFlag } from '../../src/modules/cli';
import { configFileLimits, ConfigLimitSettingError, KindRegistry } from '../../src/modules/config';
import { MeshConfigValues, parseMeshConfig } from '../../src/modules/mesh-config';
import { MeshctlOrchFlags, OrchAccess } from '../../src/modules/orch-access';
import { Settings, SettingsToken } from '../../src/modules/settings';
import { UserError } from '../../src/modules/shared/user-error';
import { outputFormatFlag, severityFlag } from './flag-types';
import { withOrchAccess } from './orch-access-scope';

type AnalyzeFlags = MeshctlOrchFlags & { namespace?: string; meshNamespace: string };

@command({
  program: 'meshctl',
  path: 'analyze',
  summary: 'Analyze mesh configuration and print validation messages',
  usage: 'analyze [<file>...]',
  variadic: true,
  flags: {
    'all-namespaces': boolFlag('analyze all namespaces', { char: 'A' }),
    analyzer: sliceFlag('analyzer to run; repeatable; all run when absent'),
    color: boolFlag('color the output', { default: true }),
    'failure-threshold': severityFlag('lowest message severity that makes the exit code non-zero', 'Error'),
    'ignore-unknown': boolFlag('do not report input documents that cannot be parsed'),
    'list-analyzers': boolFlag('list the available analyzers instead of analyzing', { char: 'L' }),
    meshConfigFile: stringFlag('mesh config file overriding the mesh config used for analysis'),
    output: outputFormatFlag(['log', 'json', 'yaml'], 'log'),
    'output-threshold': severityFlag('lowest message severity to display', 'Info'),
    recursive: boolFlag('removed: directories are always searched recursively', { char: 'R', default: true }),
    'remote-contexts': sliceFlag('orchestrator config contexts of remote clusters to analyze too'),
    revision: stringFlag('control plane revision to analyze', { char: 'r', default: 'default' }),
    suppress: sliceFlag('suppress messages of a code on a resource, as <code>=<resource> (* allowed); repeatable', { char: 'S' }),
    timeout: durationFlag('how long analysis may take before it fails', { default: '30s' }),
    'use-orch': boolFlag('analyze against the live cluster; --use-orch=false analyzes the given files only', { char: 'k', default: true }),
    verbose: boolFlag('verbose output', { char: 'v' }),
  },
})
export class Analyze extends MeshCommand {
  @inject(AnalyzerRegistry) private readonly registry!: AnalyzerRegistry;
  @inject(SettingsToken) private readonly settings!: Settings;

  async run(): Promise<void> {
    const { flags, argv } = await this.parse(Analyze);
    if (flags['list-analyzers']) {
      process.stdout.write(listAnalyzers(this.registry));
      return;
    }
    const global = flags as unknown as AnalyzeFlags;
    let limits;
    try {
      limits = configFileLimits(this.settings);
    } catch (err) {
      if (err instanceof ConfigLimitSettingError) this.fail(err.message);
      throw err;
    }
    const useOrch = flags['use-orch'];
    const revision = flags.revision;
    const remotes = (flags['remote-contexts'] ?? []).filter((c: string) => c !== '');
    let namespace: string | undefined = flags['all-namespaces'] ? undefined : global.namespace || 'default';

    const cluster = useOrch
      ? async (): Promise<ClusterInputs> => {
          const main = await withOrchAccess(this.scope, global, async (access) => {
            if (!flags['all-namespaces']) namespace = access.namespace(global.namespace);
            return clusterInputs(access, this.registry.kinds, global.meshNamespace, revision);
          });
          const objects = [...main.objects];
          for (const context of remotes) {
            const remote = await withOrchAccess(this.scope, { ...global, context }, (access) => clusterInputs(access, this.registry.kinds, global.meshNamespace, revision));
            objects.push(...remote.objects);
          }
          return { objects, ...(main.meshConfig ? { meshConfig: main.meshConfig } : {}) };
        }
      : undefined;

    const work = analyzeConfiguration(
      {
        files: argv as string[],
        analyzers: flags.analyzer ?? [],
        suppress: flags.suppress ?? [],
        failureThreshold: flags['failure-threshold'] as MessageLevel,
        outputThreshold: flags['output-threshold'] as MessageLevel,
        output: flags.output as 'log' | 'json' | 'yaml',
        color: flags.color && process.stdout.isTTY === true,
        ignoreUnknown: flags['ignore-unknown'],
        ...(flags.meshConfigFile ? { meshConfigFile: flags.meshConfigFile } : {}),
        systemNamespace: global.meshNamespace,
        get namespace() {
          return namespace;
        },
        verbose: flags.verbose,
        limits,
      },
      this.registry,
      cluster,
    );
    const outcome = await withTimeout(work, flags.timeout.milliseconds, `analysis did not finish within ${flags.timeout.toString()} (--timeout)`);
    process.stdout.write(outcome.stdout);
    process.stderr.write(outcome.stderr);
    if (outcome.failure) throw new UserError(outcome.failure, EXIT_ANALYZER_FOUND_ISSUES);
  }
}

/** The cluster's objects and the mesh config of the revision (ConfigMap `mesh`, or `mesh-<revision>`). */
async function clusterInputs(access: OrchAccess, kinds: KindRegistry, systemNamespace: string, revision: string): Promise<{ objects: AnalysisObject[]; meshConfig?: MeshConfigValues }> {
  const objects = await readClusterObjects(access.client, kinds);
  const name = revision && revision !== 'default' ? `mesh-${revision}` : 'mesh';
  const cm = objects.find((o) => o.kind === 'ConfigMap' && o.namespace === systemNamespace && o.name === name);
  const text = (cm?.raw.data as Record<string, string> | undefined)?.mesh;
  if (text === undefined) return { objects };
  try {
    return { objects, meshConfig: parseMeshConfig(text, `ConfigMap ${systemNamespace}/${name}`) };
  } catch (err) {
    throw new UserError((err as Error).message);
  }
}

function withTimeout<T>(work: Promise<T>, ms: number, message: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const expired = new Promise<never>((_resolve, reject) => {
    timer = setTimeout(() => reject(new UserError(message)), ms);
  });
  return Promise.race([work, expired]).finally(() => clearTimeout(timer));
}
