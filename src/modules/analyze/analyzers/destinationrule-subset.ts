import { injectable } from 'inversify';
import { AnalysisContext, Analyzer } from '../analyzer';
import { AnalysisObject, asArray, field } from '../objects';
import { effectiveNamespace, hostsOverlap, labelMap, labelsMatch, serviceSelector } from './common';

const DOMAIN_SUFFIX = 'cluster.local';

/** A DestinationRule host as a fully qualified name: short names are in the rule's namespace. */
function qualifiedHost(host: string, namespace: string): string {
  return host.includes('.') || host.includes('*') ? host : `${host}.${namespace}.svc.${DOMAIN_SUFFIX}`;
}

/**
 * destinationrule.SubsetSelectPodAnalyzer: a DestinationRule's host must be a Service or a
 * ServiceEntry host, and each subset of a Service host must select some of its pods.
 */
@injectable()
export class SubsetSelectPodAnalyzer implements Analyzer {
  readonly metadata = {
    name: 'destinationrule.SubsetSelectPodAnalyzer',
    description: 'Checks the host of a destination rule and whether its subsets select any pods',
    inputs: ['DestinationRule', 'Service', 'ServiceEntry', 'Pod'],
  };

  analyze(ctx: AnalysisContext): void {
    const services = ctx.objects.of('Service');
    const pods = ctx.objects.of('Pod');
    const entryHosts = ctx.objects.of('ServiceEntry').flatMap((se) => asArray(field(se.raw, 'spec', 'hosts')).filter((h): h is string => typeof h === 'string'));
    for (const dr of ctx.objects.of('DestinationRule')) {
      const raw = field(dr.raw, 'spec', 'host');
      if (typeof raw !== 'string' || raw === '') continue;
      const host = qualifiedHost(raw, effectiveNamespace(dr));
      const matching: AnalysisObject[] = services.filter((s) => hostsOverlap(host, `${s.name}.${effectiveNamespace(s)}.svc.${DOMAIN_SUFFIX}`));
      if (matching.length === 0 && !entryHosts.some((h) => hostsOverlap(host, h))) {
        ctx.report('UnknownDestinationRuleHost', dr, [raw], 'spec.host');
        continue;
      }
      const selectable = matching.filter((s) => serviceSelector(s));
      if (selectable.length === 0) continue;
      asArray(field(dr.raw, 'spec', 'subsets')).forEach((subset, i) => {
        const labels = labelMap(field(subset, 'labels'));
        const selects = selectable.some((s) => pods.some((p) => p.namespace === s.namespace && labelsMatch(serviceSelector(s), p.labels) && labelsMatch(labels, p.labels)));
        if (!selects) ctx.report('DestinationRuleSubsetNotSelectPods', dr, [String(field(subset, 'name') ?? '')], `spec.subsets[${i}]`);
      });
    }
  }
}
