import { injectable } from 'inversify';
import { AnalysisContext, Analyzer } from '../analyzer';
import { AnalysisObject, asArray, field } from '../objects';
import { PROXY_CONTAINER } from '../../model/mesh-labels';

/** The proxy's own user id: an application running as it escapes traffic capture. */
const PROXY_UID = 1337;

/** Whether a pod spec runs any application container (or the pod as a whole) as the proxy's UID. */
function usesProxyUid(podSpec: unknown): string | undefined {
  if (field(podSpec, 'securityContext', 'runAsUser') === PROXY_UID) return 'securityContext.runAsUser';
  const containers = asArray(field(podSpec, 'containers'));
  const i = containers.findIndex((c) => field(c, 'name') !== PROXY_CONTAINER && field(c, 'securityContext', 'runAsUser') === PROXY_UID);
  return i >= 0 ? `containers[${i}].securityContext.runAsUser` : undefined;
}

/** applicationUID.Analyzer: pods and Deployments must not run applications as UID 1337. */
@injectable()
export class ApplicationUidAnalyzer implements Analyzer {
  readonly metadata = {
    name: 'applicationUID.Analyzer',
    description: 'Checks invalid application UID',
    inputs: ['Pod', 'Deployment'],
  };

  analyze(ctx: AnalysisContext): void {
    const check = (o: AnalysisObject, spec: unknown, prefix: string) => {
      const where = usesProxyUid(spec);
      if (where) ctx.report('InvalidApplicationUID', o, [], `${prefix}.${where}`);
    };
    for (const pod of ctx.objects.of('Pod')) check(pod, field(pod.raw, 'spec'), 'spec');
    for (const d of ctx.objects.of('Deployment')) check(d, field(d.raw, 'spec', 'template', 'spec'), 'spec.template.spec');
  }
}
