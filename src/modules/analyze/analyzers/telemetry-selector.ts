import { injectable } from 'inversify';
import { AnalysisContext, Analyzer } from '../analyzer';
import { AnalysisObject, field } from '../objects';
import { labelMap, labelsMatch, selectorString } from './common';

/**
 * telemetry.SelectorAnalyzer: a Telemetry's selector must pick a pod of its namespace; two
 * Telemetries picking one pod, or two without a selector in one namespace, are ambiguous.
 */
@injectable()
export class TelemetrySelectorAnalyzer implements Analyzer {
  readonly metadata = {
    name: 'telemetry.SelectorAnalyzer',
    description: 'Validates that telemetries that define a selector match at least one pod, and that there aren\'t multiple telemetry resources that select overlapping pods',
    inputs: ['Telemetry', 'Pod'],
  };

  analyze(ctx: AnalysisContext): void {
    const pods = ctx.objects.of('Pod');
    const withoutSelector = new Map<string, AnalysisObject[]>();
    const byPod = new Map<AnalysisObject, AnalysisObject[]>();
    for (const t of ctx.objects.of('Telemetry')) {
      const labels = labelMap(field(t.raw, 'spec', 'selector', 'matchLabels'));
      if (Object.keys(labels).length === 0) {
        withoutSelector.set(t.namespace, [...(withoutSelector.get(t.namespace) ?? []), t]);
        continue;
      }
      const selected = pods.filter((p) => p.namespace === t.namespace && labelsMatch(labels, p.labels));
      if (selected.length === 0) ctx.report('ReferencedResourceNotFound', t, ['selector', selectorString(labels)], 'spec.selector');
      for (const p of selected) byPod.set(p, [...(byPod.get(p) ?? []), t]);
    }
    for (const [ns, list] of withoutSelector) {
      if (list.length < 2) continue;
      const names = list.map((s) => s.name).sort();
      for (const t of list) ctx.report('MultipleTelemetriesWithoutWorkloadSelectors', t, [names, ns]);
    }
    for (const [pod, list] of byPod) {
      if (list.length < 2) continue;
      const names = list.map((s) => s.name).sort();
      for (const t of list) ctx.report('ConflictingTelemetryWorkloadSelectors', t, [names, pod.namespace, pod.name], 'spec.selector');
    }
  }
}
