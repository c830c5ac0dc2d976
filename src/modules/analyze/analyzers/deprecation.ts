import { injectable } from 'inversify';
import { AnalysisContext, Analyzer } from '../analyzer';
import { asArray, field } from '../objects';

/**
 * deprecation.DeprecationAnalyzer: fields the mesh still reads but will drop (a VirtualService
 * fault delay's `percent`, `mirrorPercent`) or already ignores (a Sidecar's egress proxy), one
 * MSH0002 per use.
 */
@injectable()
export class DeprecationAnalyzer implements Analyzer {
  readonly metadata = {
    name: 'deprecation.DeprecationAnalyzer',
    description: 'Checks for deprecated Mesh types and fields',
    inputs: ['VirtualService', 'Sidecar'],
  };

  analyze(ctx: AnalysisContext): void {
    for (const vs of ctx.objects.of('VirtualService')) {
      asArray(field(vs.raw, 'spec', 'http')).forEach((route, i) => {
        const percent = field(route, 'fault', 'delay', 'percent');
        if (typeof percent === 'number' && percent > 0) {
          ctx.report('Deprecated', vs, [replaced('HTTPRoute.fault.delay.percent', 'HTTPRoute.fault.delay.percentage')], `spec.http[${i}].fault.delay.percent`);
        }
        const mirror = field(route, 'mirrorPercent') ?? field(route, 'mirror_percent');
        if (mirror !== undefined && mirror !== null) {
          ctx.report('Deprecated', vs, [replaced('HTTPRoute.mirrorPercent', 'HTTPRoute.mirrorPercentage')], `spec.http[${i}].mirrorPercent`);
        }
      });
    }
    for (const sc of ctx.objects.of('Sidecar')) {
      const proxy = field(sc.raw, 'spec', 'outboundTrafficPolicy', 'egressProxy');
      if (proxy !== undefined && proxy !== null) ctx.report('Deprecated', sc, ['Sidecar.outboundTrafficPolicy.egressProxy is ignored and will be removed'], 'spec.outboundTrafficPolicy.egressProxy');
    }
  }
}

function replaced(old: string, replacement: string): string {
  return `${old} will be removed; use ${replacement}`;
}
