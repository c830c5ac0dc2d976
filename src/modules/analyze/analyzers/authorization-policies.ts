import { injectable } from 'inversify';
import { AnalysisContext, Analyzer } from '../analyzer';
import { AnalysisObject, asArray, field } from '../objects';
import { labelMap, labelsMatch, selectorString } from './common';

/**
 * auth.AuthorizationPoliciesAnalyzer: a policy must apply to some workload (its selector picks
 * a pod, or its namespace has pods), and every namespace pattern in its sources must name a
 * namespace that exists.
 */
@injectable()
export class AuthorizationPoliciesAnalyzer implements Analyzer {
  readonly metadata = {
    name: 'auth.AuthorizationPoliciesAnalyzer',
    description: 'Checks the validity of authorization policies',
    inputs: ['AuthorizationPolicy', 'Namespace', 'Pod'],
  };

  analyze(ctx: AnalysisContext): void {
    const namespaces = ctx.objects.of('Namespace').map((n) => n.name);
    const pods = ctx.objects.of('Pod');
    for (const policy of ctx.objects.of('AuthorizationPolicy')) {
      this.checkWorkloads(ctx, policy, pods);
      this.checkNamespaces(ctx, policy, namespaces);
    }
  }

  private checkWorkloads(ctx: AnalysisContext, policy: AnalysisObject, pods: readonly AnalysisObject[]): void {
    const selector = labelMap(field(policy.raw, 'spec', 'selector', 'matchLabels'));
    const hasSelector = Object.keys(selector).length > 0;
    // A policy in the root namespace applies mesh-wide: its selector may pick a pod anywhere.
    const meshWide = policy.namespace === ctx.meshConfig.rootNamespace;
    if (meshWide && !hasSelector) return;
    const candidates = meshWide ? pods : pods.filter((p) => p.namespace === policy.namespace);
    if (candidates.some((p) => labelsMatch(selector, p.labels))) return;
    ctx.report('NoMatchingWorkloadsFound', policy, [selectorString(selector)], hasSelector ? 'spec.selector' : undefined);
  }

  private checkNamespaces(ctx: AnalysisContext, policy: AnalysisObject, namespaces: readonly string[]): void {
    asArray(field(policy.raw, 'spec', 'rules')).forEach((rule, r) => {
      asArray(field(rule, 'from')).forEach((from, f) => {
        for (const key of ['namespaces', 'notNamespaces']) {
          asArray(field(from, 'source', key)).forEach((pattern, i) => {
            if (typeof pattern !== 'string' || namespaces.some((ns) => namespacePatternMatches(pattern, ns))) return;
            ctx.report('ReferencedResourceNotFound', policy, ['namespace', pattern], `spec.rules[${r}].from[${f}].source.${key}[${i}]`);
          });
        }
      });
    });
  }
}

/** Authorization policy string semantics: exact, `prefix*`, `*suffix`, or `*`. */
function namespacePatternMatches(pattern: string, namespace: string): boolean {
  if (pattern === '*') return true;
  if (pattern.endsWith('*')) return namespace.startsWith(pattern.slice(0, -1));
  if (pattern.startsWith('*')) return namespace.endsWith(pattern.slice(1));
  return pattern === namespace;
}
