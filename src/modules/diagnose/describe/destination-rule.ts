/** A DestinationRule as describe shows it: the pod's subsets, and the traffic policy in short. */
import { ConfigResource } from '../../config';
import { DestinationRuleSpec, TrafficPolicy } from '../../config/kinds/destination-rule';
import { labelsMatch } from '../../registry';
import { kname, LEVEL0, LEVEL1, LEVEL2, Lines } from './text';

export type DestinationRule = ConfigResource<DestinationRuleSpec>;

export interface SubsetMatch {
  /** Subsets whose labels the pod has. */
  matching: string[];
  nonMatching: string[];
}

/** Which subsets select the pod (a subset without labels selects every pod). */
export function subsetsOf(dr: DestinationRule | undefined, labels: Readonly<Record<string, string>>): SubsetMatch {
  const out: SubsetMatch = { matching: [], nonMatching: [] };
  for (const subset of dr?.spec.subsets ?? []) (labelsMatch(subset.labels ?? {}, labels) ? out.matching : out.nonMatching).push(subset.name);
  return out;
}

/** `Policies: load balancer/connection pool/outlier detection` for the parts a policy sets, else nothing. */
function shortPolicies(p: Pick<TrafficPolicy, 'loadBalancer' | 'connectionPool' | 'outlierDetection'>): string | undefined {
  const parts = [p.loadBalancer && 'load balancer', p.connectionPool && 'connection pool', p.outlierDetection && 'outlier detection'].filter(Boolean);
  return parts.length ? `Policies: ${parts.join('/')}` : undefined;
}

export function writeDestinationRule(out: Lines, indent: number, dr: DestinationRule, labels: Readonly<Record<string, string>>, viewerNamespace: string): void {
  out.add(`DestinationRule: ${kname(dr.metadata, viewerNamespace)} for "${dr.spec.host}"`, indent + LEVEL0);
  const { matching, nonMatching } = subsetsOf(dr, labels);
  if (matching.length || nonMatching.length) {
    if (!matching.length) out.add(`WARNING POD DOES NOT MATCH ANY SUBSETS.  (Non matching subsets ${nonMatching.join(',')})`, indent + LEVEL1);
    out.add(`Matching subsets: ${matching.join(',')}`, indent + LEVEL1);
    if (nonMatching.length) out.add(`(Non-matching subsets ${nonMatching.join(',')})`, indent + LEVEL2);
  }
  const policy = dr.spec.trafficPolicy;
  if (!policy) {
    out.add('No Traffic Policy', indent + LEVEL1);
    return;
  }
  if (policy.tls) out.add(`Traffic Policy TLS Mode: ${policy.tls.mode ?? 'DISABLE'}`, indent + LEVEL1);
  const short = shortPolicies(policy);
  if (short) out.add(short, indent + LEVEL1);
  if (policy.portLevelSettings?.length) {
    out.add('Port Level Settings:', indent + LEVEL1);
    for (const ps of policy.portLevelSettings) {
      // The incumbent prints the port at a fixed indentation.
      out.add(`${ps.port?.number ?? 0}:`, 4);
      if (ps.tls) out.add(`TLS Mode: ${ps.tls.mode ?? 'DISABLE'}`, indent + LEVEL2);
      const portShort = shortPolicies(ps);
      if (portShort) out.add(portShort, indent + LEVEL2);
    }
  }
}
