import { injectable } from 'inversify';
import { portProtocol } from '../../registry/orch/ports';
import { AnalysisContext, Analyzer } from '../analyzer';
import { AnalysisObject, asArray, asRecord, asStringMap, field } from '../objects';
import { fullName, labelsMatch, serviceSelector } from './common';
import { PROXY_CONTAINER, INJECT_ANNOTATION as INJECT_KEY } from '../../model/mesh-labels';


/** `true`/`false` of the inject label or annotation, when set to either. */
function injectSwitch(values: Record<string, string>): boolean | undefined {
  const v = values[INJECT_KEY]?.toLowerCase();
  return v === 'true' ? true : v === 'false' ? false : undefined;
}

/**
 * Whether a Deployment's pods get the proxy, as the incumbent judges it from the objects alone:
 * a proxy container in the template; else the template's inject label, then annotation; else
 * the namespace's injection label (`mesh-injection=enabled`, or a `mesh.io/rev` label).
 */
function deploymentInMesh(d: AnalysisObject, ctx: AnalysisContext): boolean {
  const template = field(d.raw, 'spec', 'template');
  if (asArray(field(template, 'spec', 'containers')).some((c) => field(c, 'name') === PROXY_CONTAINER)) return true;
  const byLabel = injectSwitch(asStringMap(field(template, 'metadata', 'labels')));
  if (byLabel !== undefined) return byLabel;
  const byAnnotation = injectSwitch(asStringMap(field(template, 'metadata', 'annotations')));
  if (byAnnotation !== undefined) return byAnnotation;
  const ns = ctx.objects.get('Namespace', '', d.namespace) ?? ctx.objects.get('Namespace', d.namespace, d.namespace);
  if (!ns) return false;
  return ns.labels['mesh-injection'] === 'enabled' || ns.labels['mesh.io/rev'] !== undefined;
}

interface SelectedPort {
  service: string;
  port: number;
  targetPort: string;
  protocol: string;
}

/**
 * deployment.MultiServiceAnalyzer: the Services selecting a meshed Deployment's pods must not
 * give one port two protocols (MSH0116), nor send one targetPort from two ports (MSH0137): the
 * proxy can serve a pod port one way only.
 */
@injectable()
export class DeploymentMultiServiceAnalyzer implements Analyzer {
  readonly metadata = {
    name: 'deployment.MultiServiceAnalyzer',
    description: 'Checks association between services and pods',
    inputs: ['Deployment', 'Service', 'Namespace'],
  };

  analyze(ctx: AnalysisContext): void {
    const services = ctx.objects.of('Service');
    for (const d of ctx.objects.of('Deployment')) {
      if (!deploymentInMesh(d, ctx)) continue;
      const podLabels = asStringMap(field(d.raw, 'spec', 'template', 'metadata', 'labels'));
      const ports: SelectedPort[] = services
        .filter((svc) => svc.namespace === d.namespace)
        .filter((svc) => {
          const selector = serviceSelector(svc);
          return selector !== undefined && labelsMatch(selector, podLabels);
        })
        .flatMap((svc) =>
          asArray(field(svc.raw, 'spec', 'ports')).map((p) => {
            const port = asRecord(p);
            const number = Number(port.port ?? 0);
            const target = port.targetPort === undefined || port.targetPort === 0 || port.targetPort === '' ? String(number) : String(port.targetPort);
            return { service: svc.name, port: number, targetPort: target, protocol: portProtocol(port as { name?: string; protocol?: string; appProtocol?: string }) };
          }),
        );
      this.sameNumberTwoProtocols(ctx, d, ports);
      this.sameTargetTwoPorts(ctx, d, ports);
    }
  }

  private sameNumberTwoProtocols(ctx: AnalysisContext, d: AnalysisObject, ports: readonly SelectedPort[]): void {
    for (const number of new Set(ports.map((p) => p.port))) {
      const on = ports.filter((p) => p.port === number);
      if (new Set(on.map((p) => p.protocol)).size > 1) ctx.report('DeploymentAssociatedToMultipleServices', d, [fullName(d), number, on.map((p) => p.service)]);
    }
  }

  private sameTargetTwoPorts(ctx: AnalysisContext, d: AnalysisObject, ports: readonly SelectedPort[]): void {
    for (const target of new Set(ports.map((p) => p.targetPort))) {
      const on = ports.filter((p) => p.targetPort === target);
      const numbers = [...new Set(on.map((p) => p.port))];
      if (numbers.length > 1) ctx.report('DeploymentConflictingPorts', d, [fullName(d), on.map((p) => p.service), target, numbers]);
    }
  }
}
