import type { MeshConfigValues } from '../mesh-config';
import { AnalysisContext, Analyzer } from './analyzer';
import { formatTemplate, LEVELS, MessageCatalogue, MessageLevel } from './catalogue';
import { AnalysisMessage } from './message';
import { AnalysisObject, ObjectSet, resourceName } from './objects';

export interface AnalysisRun {
  analyzers: readonly Analyzer[];
  objects: ObjectSet;
  meshConfig: MeshConfigValues;
  systemNamespace: string;
  catalogue: MessageCatalogue;
}

/** Runs each analyzer over the objects and collects their messages, in a stable order. */
export function runAnalyzers(run: AnalysisRun): AnalysisMessage[] {
  const messages: AnalysisMessage[] = [];
  const ctx: AnalysisContext = {
    objects: run.objects,
    meshConfig: run.meshConfig,
    systemNamespace: run.systemNamespace,
    report(name: string, object: AnalysisObject, args: readonly unknown[], fieldPath?: string) {
      const type = run.catalogue.named(name);
      const line = (fieldPath && object.fieldLines?.lineOf(fieldPath)) || object.origin?.line;
      messages.push({
        code: type.code,
        name: type.name,
        level: type.level,
        resource: resourceName(object),
        namespace: object.namespace,
        ...(object.origin ? { origin: { file: object.origin.file, ...(line ? { line } : {}) } } : {}),
        text: formatTemplate(type.template, args),
      });
    },
  };
  for (const analyzer of run.analyzers) analyzer.analyze(ctx);
  return messages.sort((a, b) => a.resource.localeCompare(b.resource) || a.code.localeCompare(b.code) || a.text.localeCompare(b.text));
}

/** Picks the analyzers `--analyzer` names (all when none); an unknown name is an error naming the known ones. */
export function selectAnalyzers(all: readonly Analyzer[], names: readonly string[]): Analyzer[] {
  if (names.length === 0) return [...all];
  return names.map((n) => {
    const a = all.find((x) => x.metadata.name === n);
    if (!a) throw new Error(`unknown analyzer ${JSON.stringify(n)}; meshctl analyze -L lists them`);
    return a;
  });
}

/** One `--suppress` rule: `<code>=<resource>`, `*` matching any run of characters on either side. */
export interface SuppressRule {
  code: RegExp;
  resource: RegExp;
}

export function parseSuppressRules(specs: readonly string[]): SuppressRule[] {
  return specs.map((s) => {
    const eq = s.indexOf('=');
    if (eq <= 0 || eq === s.length - 1) throw new Error(`--suppress ${JSON.stringify(s)}: expected <code>=<resource>, e.g. MSH0102=Namespace frod`);
    return { code: glob(s.slice(0, eq).trim()), resource: glob(s.slice(eq + 1).trim()) };
  });
}

function glob(pattern: string): RegExp {
  return new RegExp(`^${pattern.split('*').map((p) => p.replace(/[.+?^${}()|[\]\\]/g, '\\$&')).join('.*')}$`);
}

export function suppressed(m: AnalysisMessage, rules: readonly SuppressRule[]): boolean {
  return rules.some((r) => r.code.test(m.code) && r.resource.test(m.resource));
}

export function atOrAbove(level: MessageLevel, threshold: MessageLevel): boolean {
  return LEVELS.indexOf(level) >= LEVELS.indexOf(threshold);
}
