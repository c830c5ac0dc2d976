import { KindDefinition, KindRegistry, validateDocument } from '../config';
import { AnalysisContext, Analyzer, AnalyzerMetadata } from './analyzer';

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
      if (result.ok) continue;
      for (const issue of result.issues) ctx.report('SchemaValidationError', o, [issue.field ? `${issue.field}: ${issue.message}` : issue.message], issue.field);
    }
  }
}

/** One schema analyzer per mesh kind. */
export function schemaAnalyzers(kinds: KindRegistry): SchemaValidationAnalyzer[] {
  return kinds.all().map((k) => new SchemaValidationAnalyzer(k, kinds));
}
