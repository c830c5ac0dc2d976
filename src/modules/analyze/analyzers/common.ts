import { labelsMatch } from '../../registry/model';
import { AnalysisObject, asRecord, asStringMap, field } from '../objects';

export { labelsMatch };

/** A label selector as the orchestrator prints it: `k1=v1,k2=v2`, keys sorted. */
export function selectorString(selector: Record<string, string>): string {
  return Object.keys(selector)
    .sort()
    .map((k) => `${k}=${selector[k]}`)
    .join(',');
}

/** `spec.selector` (Gateway) or `spec.workloadSelector.labels` style label maps. */
export function labelMap(v: unknown): Record<string, string> {
  return asStringMap(v);
}

/** The pods a label selector picks, optionally within one namespace. */
export function podsSelected(pods: readonly AnalysisObject[], selector: Record<string, string>, namespace?: string): AnalysisObject[] {
  return pods.filter((p) => (namespace === undefined || p.namespace === namespace) && labelsMatch(selector, p.labels));
}

/** A Service's own selector; a Service without one selects nothing. */
export function serviceSelector(svc: AnalysisObject): Record<string, string> | undefined {
  const s = asRecord(field(svc.raw, 'spec', 'selector'));
  return Object.keys(s).length ? asStringMap(s) : undefined;
}

/** Hostnames match when equal or when a wildcard of either covers the other (`*.foo.com`, `*`). */
export function hostsOverlap(a: string, b: string): boolean {
  const covers = (pattern: string, host: string) => pattern === '*' || pattern === host || (pattern.startsWith('*.') && host.endsWith(pattern.slice(1)));
  return covers(a, b) || covers(b, a);
}

/** The namespace an object lives in for lookups: its own, or `default` when the input gave none. */
export function effectiveNamespace(o: AnalysisObject): string {
  return o.namespace || 'default';
}

/** `name` qualified as the orchestrator writes a full name: `ns/name`, or `name` without a namespace. */
export function fullName(o: AnalysisObject): string {
  return o.namespace ? `${o.namespace}/${o.name}` : o.name;
}
