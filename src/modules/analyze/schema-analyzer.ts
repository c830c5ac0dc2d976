import { KindDefinition, KindRegistry, validateDocument } from '../config';
import { AnalysisContext, Analyzer, AnalyzerMetadata } from './analyzer';

/** Warnings the analysis catalogue has a message of their own for; others are SchemaWarning. */
const WARNING_MESSAGES: Record<string, string> = {
  'unreachable-rule': 'VirtualServiceUnreachableRule',
  'ineffective-match': 'VirtualServiceIneffectiveMatch',
};

/** `schema.ValidationAnalyzer.<Kind>`: the mesh's own validation of one kind, as analysis messages. */
export class SchemaValidationAnalyzer implements Analyzer {
  readonly metadata: AnalyzerMetadata;

  constructor(
    private readonly kind: KindDefinition,
    private readonly kinds: KindRegistry,
  ) {
    this.metadata = { name: `schema.ValidationAnalyzer.${kind.kind}`, description: `Runs schema validation as an analyzer on '${kind.kind}' resources`, inputs: [kind.kind] };
  }

  analyze(ctx: AnalysisContext): void {
    for (const o of ctx.objects.of(this.kind.kind)) {
      const result = validateDocument(o.raw, this.kinds);
      if (result.ok) {
        for (const w of result.warnings) ctx.report(WARNING_MESSAGES[w.type ?? ''] ?? 'SchemaWarning', o, w.type ? (w.args ?? []) : [`${w.field}: ${w.message}`], w.field);
        continue;
      }
      for (const issue of result.issues) ctx.report('SchemaValidationError', o, [issue.field ? `${issue.field}: ${issue.message}` : issue.message], issue.field);
    }
  }
}

/** One schema analyzer per mesh kind. */
export function schemaAnalyzers(kinds: KindRegistry): SchemaValidationAnalyzer[] {
  return kinds.all().map((k) => new SchemaValidationAnalyzer(k, kinds));
}
