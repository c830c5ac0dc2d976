import { existsSync } from 'node:fs';
import { ConfigFileLimits } from '../config';
import { DEFAULT_MESH_CONFIG, MeshConfigValues, readMeshConfigFile } from '../mesh-config';
import { UserError } from '../shared/user-error';
import { atOrAbove, parseSuppressRules, runAnalyzers, selectAnalyzers, suppressed } from './runner';
import { MessageLevel } from './catalogue';
import { readFileInputs } from './file-inputs';
import { BUILTIN_KINDS } from './known-kinds';
import { AnalysisMessage } from './message';
import { AnalysisObject, ObjectSet } from './objects';
import { formatJson, formatLog, formatYaml } from './output';
import { AnalyzerRegistry } from './registry';

/** The incumbent's exit codes: issues at or above the failure threshold, and unreadable input. */
export const EXIT_ANALYZER_FOUND_ISSUES = 79;
export const EXIT_BAD_INPUT = 65;

export interface AnalyzeOptions {
  files: readonly string[];
  analyzers: readonly string[];
  suppress: readonly string[];
  failureThreshold: MessageLevel;
  outputThreshold: MessageLevel;
  output: 'log' | 'json' | 'yaml';
  color: boolean;
  ignoreUnknown: boolean;
  meshConfigFile?: string;
  systemNamespace: string;
  /** The namespace messages are shown for; undefined with --all-namespaces. */
  namespace?: string;
  verbose: boolean;
  limits: ConfigFileLimits;
}

/** What the live cluster contributes: its objects and, when it has one, its mesh config. */
export interface ClusterInputs {
  objects: AnalysisObject[];
  meshConfig?: MeshConfigValues;
}

export interface AnalyzeOutcome {
  stdout: string;
  stderr: string;
  /** Set when messages reached the failure threshold: the one line the command fails with. */
  failure?: string;
}

/**
 * One `meshctl analyze` run: the cluster's objects (when `cluster` is given) with the files
 * over them, the selected analyzers, then suppression, thresholds and output.
 */
export async function analyzeConfiguration(options: AnalyzeOptions, registry: AnalyzerRegistry, cluster?: () => Promise<ClusterInputs>): Promise<AnalyzeOutcome> {
  let analyzers;
  let rules;
  try {
    analyzers = selectAnalyzers(registry.all(), options.analyzers);
    rules = parseSuppressRules(options.suppress);
  } catch (err) {
    throw new UserError((err as Error).message);
  }
  let stderr = '';
  const fromCluster = cluster ? await cluster() : undefined;
  let meshConfig = fromCluster?.meshConfig ?? DEFAULT_MESH_CONFIG;
  if (options.meshConfigFile) {
    if (!existsSync(options.meshConfigFile)) throw new UserError(`--meshConfigFile ${options.meshConfigFile}: no such file`);
    try {
      meshConfig = readMeshConfigFile(options.meshConfigFile, '--meshConfigFile').values;
    } catch (err) {
      throw new UserError((err as Error).message, EXIT_BAD_INPUT);
    }
  }

  const objects = new ObjectSet();
  for (const o of fromCluster?.objects ?? []) objects.add(o);
  const files = await readFileInputs(options.files, options.limits);
  const problems = [...files.problems];
  // A kind no analyzer reads (another product's, or one the mesh dropped) is skipped, and said.
  const unknownKinds: string[] = [];
  for (const o of files.objects) {
    if (!registry.kinds.kindNamed(o.kind) && !BUILTIN_KINDS.has(o.kind)) {
      unknownKinds.push(`${o.origin?.file}${o.origin?.line ? `:${o.origin.line}` : ''}: unknown kind ${o.kind} (${o.apiVersion}) of ${o.name}`);
      continue;
    }
    // Applied to the cluster, a file's object without a namespace lands in the selected one.
    if (fromCluster && !o.namespace && o.kind !== 'Namespace') o.namespace = options.namespace ?? 'default';
    objects.add(o);
  }
  if (problems.length && !options.ignoreUnknown) {
    throw new UserError(`cannot analyze the input (--ignore-unknown skips what cannot be read):\n  ${problems.join('\n  ')}`, EXIT_BAD_INPUT);
  }
  if (unknownKinds.length && !options.ignoreUnknown) stderr += unknownKinds.map((line) => `Skipped ${line}\n`).join('');
  if (options.verbose) {
    stderr += `Analyzing ${objects.all().length} objects with ${analyzers.length} analyzer(s): ${analyzers.map((a) => a.metadata.name).join(', ')}\n`;
  }

  const shownNamespace = (m: AnalysisMessage) => !fromCluster || options.namespace === undefined || m.namespace === '' || m.namespace === options.namespace || m.origin !== undefined;
  const messages = runAnalyzers({ analyzers, objects, meshConfig, systemNamespace: options.systemNamespace, catalogue: registry.catalogue() }).filter(
    (m) => shownNamespace(m) && !suppressed(m, rules),
  );
  const shown = messages.filter((m) => atOrAbove(m.level, options.outputThreshold));
  const failing = messages.some((m) => atOrAbove(m.level, options.failureThreshold));
  const scope = options.namespace === undefined ? 'all namespaces' : `namespace: ${options.namespace}`;

  let stdout = '';
  if (options.output === 'json') stdout = formatJson(shown);
  else if (options.output === 'yaml') stdout = formatYaml(shown);
  else if (shown.length) stdout = formatLog(shown, options.color);
  else stderr += `\u2714 No validation issues found when analyzing ${scope}.\n`;
  return { stdout, stderr, ...(failing ? { failure: `Analyzers found issues when analyzing ${scope}.` } : {}) };
}

/** `-L`: each analyzer's name, what it checks and the kinds it reads. */
export function listAnalyzers(registry: AnalyzerRegistry): string {
  const lines = ['Available analyzers:'];
  for (const a of registry.all()) lines.push(`* ${a.metadata.name}:\n    ${a.metadata.description}`);
  return `${lines.join('\n')}\n`;
}
