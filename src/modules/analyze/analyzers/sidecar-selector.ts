import { injectable } from 'inversify';
import { AnalysisContext, Analyzer } from '../analyzer';
import { AnalysisObject, field } from '../objects';
import { AMBIENT_REDIRECTION_ANNOTATION, DATAPLANE_MODE_LABEL, INJECTION_LABEL, REVISION_LABEL } from '../../model/mesh-labels';
import { labelMap, labelsMatch, selectorString } from './common';

/** A namespace enrolled in ambient mode and not in sidecar injection: Sidecar resources do nothing there. */
function ambientNamespace(ns: AnalysisObject | undefined): boolean {
  if (!ns || ns.labels[DATAPLANE_MODE_LABEL] !== 'ambient') return false;
  return ns.labels[INJECTION_LABEL] === undefined && ns.labels[REVISION_LABEL] === undefined;
}

function ambientPod(pod: AnalysisObject): boolean {
  return pod.annotations[AMBIENT_REDIRECTION_ANNOTATION] === 'enabled';
}

/**
 * sidecar.SelectorAnalyzer: a Sidecar's workload selector must pick a pod of its namespace;
 * two Sidecars picking one pod, or two without selector in one namespace, are ambiguous; and a
 * Sidecar on ambient workloads has no effect.
 */
@injectable()
export class SidecarSelectorAnalyzer implements Analyzer {
  readonly metadata = {
    name: 'sidecar.SelectorAnalyzer',
    description: 'Validates that sidecars that define a workload selector match at least one pod, and that there aren\'t multiple sidecar resources that select overlapping pods',
    inputs: ['Sidecar', 'Pod', 'Namespace'],
  };

  analyze(ctx: AnalysisContext): void {
    const pods = ctx.objects.of('Pod');
    const withoutSelector = new Map<string, AnalysisObject[]>();
    const byPod = new Map<AnalysisObject, AnalysisObject[]>();
    for (const sc of ctx.objects.of('Sidecar')) {
      const labels = labelMap(field(sc.raw, 'spec', 'workloadSelector', 'labels'));
      if (Object.keys(labels).length === 0) {
        withoutSelector.set(sc.namespace, [...(withoutSelector.get(sc.namespace) ?? []), sc]);
        if (ambientNamespace(ctx.objects.get('Namespace', '', sc.namespace))) {
          ctx.report('IneffectivePolicy', sc, ['namespace is in ambient mode, the policy has no impact']);
        }
        continue;
      }
      const selected = pods.filter((p) => p.namespace === sc.namespace && labelsMatch(labels, p.labels));
      if (selected.length === 0) {
        ctx.report('ReferencedResourceNotFound', sc, ['selector', selectorString(labels)], 'spec.workloadSelector');
        continue;
      }
      for (const p of selected) byPod.set(p, [...(byPod.get(p) ?? []), sc]);
      if (selected.some(ambientPod)) ctx.report('IneffectivePolicy', sc, ['selected workload is in ambient mode, the policy has no impact'], 'spec.workloadSelector');
    }
    for (const [ns, list] of withoutSelector) {
      if (list.length < 2) continue;
      const names = list.map((s) => s.name).sort();
      for (const sc of list) ctx.report('MultipleSidecarsWithoutWorkloadSelectors', sc, [names, ns]);
    }
    for (const [pod, list] of byPod) {
      if (list.length < 2) continue;
      const names = list.map((s) => s.name).sort();
      for (const sc of list) ctx.report('ConflictingSidecarWorkloadSelectors', sc, [names, pod.namespace, pod.name], 'spec.workloadSelector');
    }
  }
}
