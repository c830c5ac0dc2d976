import { injectable } from 'inversify';
import { IGNORED_NAMESPACES, Pod, podDecision } from '../../inject';
import { DATAPLANE_MODE_LABEL, INJECTION_LABEL, PROXY_CONTAINER, REVISION_LABEL } from '../../model/mesh-labels';
import { AnalysisContext, Analyzer } from '../analyzer';
import { AnalysisObject, asArray, field } from '../objects';

/** The injector's own pod-level rules with the default policy (enabled, no selectors). */
const DEFAULT_POD_POLICY = { policy: 'enabled', neverInjectSelector: [], alwaysInjectSelector: [] };

/**
 * injection.Analyzer: every namespace says how it joins the mesh (and says it once), and pods
 * of namespaces enabled for injection carry the proxy.
 */
@injectable()
export class InjectionAnalyzer implements Analyzer {
  readonly metadata = {
    name: 'injection.Analyzer',
    description: 'Checks conditions related to Mesh sidecar injection',
    inputs: ['Namespace', 'Pod'],
  };

  analyze(ctx: AnalysisContext): void {
    const injected = new Set<string>();
    for (const ns of ctx.objects.of('Namespace')) {
      if (ns.name === ctx.systemNamespace || IGNORED_NAMESPACES.includes(ns.name)) continue;
      const modes = enrolmentLabels(ns);
      if (modes.length > 1) {
        ctx.report('NamespaceMultipleInjectionLabels', ns, [modes], 'metadata.labels');
        continue;
      }
      if (modes.length === 0) {
        // An explicit `disabled` is a decision; no label at all is probably an oversight.
        if (ns.labels[INJECTION_LABEL] === undefined) ctx.report('NamespaceNotInjected', ns, [ns.name, ns.name]);
        continue;
      }
      if (modes[0] !== DATAPLANE_MODE_LABEL) injected.add(ns.name);
    }
    for (const pod of ctx.objects.of('Pod')) {
      if (!injected.has(pod.namespace) || hasProxy(pod)) continue;
      if (!podDecision(DEFAULT_POD_POLICY, pod.raw as Pod, pod.namespace).inject) continue;
      ctx.report('PodMissingProxy', pod, [pod.name]);
    }
  }
}

/** The labels by which a namespace joins the mesh: sidecar injection (default or a revision) or ambient. */
function enrolmentLabels(ns: AnalysisObject): string[] {
  const labels: string[] = [];
  const injection = ns.labels[INJECTION_LABEL];
  // `mesh-injection: disabled` opts the namespace out, whatever else it carries.
  if (injection === 'disabled') return labels;
  if (injection !== undefined) labels.push(INJECTION_LABEL);
  if (ns.labels[REVISION_LABEL] !== undefined) labels.push(REVISION_LABEL);
  if (ns.labels[DATAPLANE_MODE_LABEL] === 'ambient') labels.push(DATAPLANE_MODE_LABEL);
  return labels;
}

function hasProxy(pod: AnalysisObject): boolean {
  const containers = [...asArray(field(pod.raw, 'spec', 'containers')), ...asArray(field(pod.raw, 'spec', 'initContainers'))];
  return containers.some((c) => field(c, 'name') === PROXY_CONTAINER);
}
