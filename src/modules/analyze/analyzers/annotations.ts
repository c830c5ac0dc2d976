import { injectable } from 'inversify';
import { annotationValueProblem } from '../../inject';
import { inMeshDomain, MESH_SET_ANNOTATIONS, meshAnnotation } from '../../model/annotation-catalogue';
import { INJECT_ANNOTATION } from '../../model/mesh-labels';
import { AnalysisContext, Analyzer } from '../analyzer';
import { AnalysisObject } from '../objects';

const CHECKED_KINDS = ['Namespace', 'Service', 'Pod', 'Deployment'];

/**
 * annotations.K8sAnalyzer: every annotation in the mesh's domains on an orchestrator object is
 * one the mesh knows, sits on a kind it belongs to, has a value the injector accepts, and is not
 * deprecated.
 */
@injectable()
export class AnnotationsAnalyzer implements Analyzer {
  readonly metadata = {
    name: 'annotations.K8sAnalyzer',
    description: 'Checks for misplaced and invalid Mesh annotations in orchestrator resources',
    inputs: CHECKED_KINDS,
  };

  analyze(ctx: AnalysisContext): void {
    for (const kind of CHECKED_KINDS) for (const o of ctx.objects.of(kind)) this.check(ctx, o);
  }

  private check(ctx: AnalysisContext, o: AnalysisObject): void {
    for (const [name, value] of Object.entries(o.annotations)) {
      if (!inMeshDomain(name) || MESH_SET_ANNOTATIONS.has(name)) continue;
      const at = `metadata.annotations.${name}`;
      const known = meshAnnotation(name);
      if (!known) {
        ctx.report('UnknownAnnotation', o, [name], at);
        continue;
      }
      // Someone who also set the label knows the annotation is on its way out.
      const replaced = name === INJECT_ANNOTATION && o.labels[INJECT_ANNOTATION] !== undefined;
      if (known.deprecated && !replaced) ctx.report('DeprecatedAnnotation', o, [name, known.deprecated.extra], at);
      if (known.resources.includes('Any')) continue;
      // A Deployment carries pod annotations only in its template, not on itself.
      if (!known.resources.includes(o.kind as never)) {
        ctx.report('MisplacedAnnotation', o, [name, known.resources.join(', ')], at);
        continue;
      }
      const problem = annotationValueProblem(name, String(value));
      if (problem) ctx.report('InvalidAnnotation', o, [name, problem], at);
    }
  }
}
