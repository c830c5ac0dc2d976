/**
 * A VirtualService as describe shows it for one Service: the routes that reach the Service (their
 * destinations, weights and match conditions), and why the others do not reach the pod (a
 * subset it is not in, a subset no DestinationRule defines).
 */
import { ConfigResource } from '../../config';
import { HTTPFaultInjection, HTTPMatchRequest, HTTPRoute, L4MatchAttributes, StringMatch, TCPRoute, VirtualServiceSpec } from '../../config/kinds/virtual-service';
import type { DestinationRule, SubsetMatch } from './destination-rule';
import { kname, LEVEL0, LEVEL1, LEVEL2, Lines } from './text';

export type VirtualService = ConfigResource<VirtualServiceSpec>;

/** What the summary needs beside the VirtualService. */
export interface RouteTarget {
  /** The Service's fully qualified host. */
  host: string;
  /** The subsets of the pod, by the DestinationRule in force for the host. */
  subsets: SubsetMatch;
  dr: DestinationRule | undefined;
  /** Host names of rules qualified as the mesh qualifies them (short names in the rule's namespace). */
  qualify: (host: string, namespace: string) => string;
  viewerNamespace: string;
}

function renderStringMatch(m: StringMatch | undefined): string {
  if (!m) return '';
  if (m.exact !== undefined) return m.exact;
  if (m.prefix !== undefined) return `${m.prefix}*`;
  return m.regex !== undefined ? `regex:${JSON.stringify(m.regex)}` : '';
}

function renderMatch(match: HTTPMatchRequest): string {
  const parts: string[] = [];
  if (match.uri) parts.push(renderStringMatch(match.uri) + (match.ignoreUriCase ? ' uncased' : ''));
  const headers = Object.keys(match.headers ?? {}).sort();
  if (headers.length) parts.push(`when headers are ${headers.map((k) => `${k}=${renderStringMatch(match.headers![k])}`).join('; ')}`);
  return `Match: ${parts.join(' ')}`.trim();
}

function renderMatches(matches: readonly HTTPMatchRequest[] | undefined): string {
  return matches?.length ? matches.map(renderMatch).join(', ') : 'everything';
}

/** A fault injection in short: `delay 5s (50%), abort 503 (10%)`. */
function renderFault(fault: HTTPFaultInjection): string {
  const percent = (p: { value?: number } | undefined) => (p?.value !== undefined ? ` (${p.value}%)` : '');
  const parts: string[] = [];
  if (fault.delay) parts.push(`delay ${fault.delay.fixedDelay}${percent(fault.delay.percentage)}`);
  if (fault.abort) parts.push(`abort ${fault.abort.httpStatus ?? fault.abort.grpcStatus ?? fault.abort.http2Error ?? ''}${percent(fault.abort.percentage)}`);
  return parts.join(', ');
}

/** An L4 match as `port:27017 source_namespace:"x"`, the fields it sets. */
function renderL4Match(m: L4MatchAttributes): string {
  const parts: string[] = [];
  for (const subnet of m.destinationSubnets ?? []) parts.push(`destination_subnets:${JSON.stringify(subnet)}`);
  if (m.port !== undefined) parts.push(`port:${m.port}`);
  for (const [k, v] of Object.entries(m.sourceLabels ?? {}).sort(([a], [b]) => (a < b ? -1 : 1))) parts.push(`source_labels:{key:${JSON.stringify(k)} value:${JSON.stringify(v)}}`);
  for (const g of m.gateways ?? []) parts.push(`gateways:${JSON.stringify(g)}`);
  if (m.sourceNamespace) parts.push(`source_namespace:${JSON.stringify(m.sourceNamespace)}`);
  return parts.join(' ');
}

/** Whether the HTTP route sends traffic to the Service (to a subset the pod is in), and what to say about it. */
function httpRouteFacts(vs: VirtualService, route: HTTPRoute, target: RouteTarget): { match: boolean; facts: string[] } {
  const facts: string[] = [];
  const mismatches: string[] = [];
  let match = false;
  for (const dest of route.route ?? []) {
    const host = dest.destination.host;
    const subset = dest.destination.subset ?? '';
    const weight = dest.weight ?? 0;
    if (target.qualify(host, vs.metadata.namespace) !== target.host) {
      facts.push(subset ? `Route to ${host} with invalid config` : `Route to host "${host}" with weight ${weight}%`);
      continue;
    }
    if (subset) {
      if (target.subsets.nonMatching.includes(subset)) {
        mismatches.push(`Route to non-matching subset ${subset} for (${renderMatches(route.match)})`);
        continue;
      }
      if (!target.subsets.matching.includes(subset)) {
        mismatches.push(
          target.dr
            ? `Warning: Route to UNKNOWN subset ${subset}; check DestinationRule ${kname(target.dr.metadata, target.viewerNamespace)}`
            : `Warning: Route to subset ${subset} but NO DESTINATION RULE defining subsets!`,
        );
        continue;
      }
    }
    match = true;
    if (weight > 0) facts.push(`Route to host "${host}"${subset ? ` subset "${subset}"` : ''} with weight ${weight}%`);
  }
  if (match) {
    const conditions = [...(route.fault ? [`Fault injection ${renderFault(route.fault)}`] : []), ...(route.match ?? []).map(renderMatch)];
    if (conditions.length) facts.push(conditions.join(', '));
  } else {
    facts.push(...mismatches);
  }
  return { match, facts };
}

function tcpRouteFacts(vs: VirtualService, route: TCPRoute, target: RouteTarget): { match: boolean; facts: string[] } {
  const match = (route.route ?? []).some((d) => target.qualify(d.destination.host, vs.metadata.namespace) === target.host);
  return { match, facts: match ? (route.match ?? []).map(renderL4Match) : [] };
}

export function writeVirtualService(out: Lines, indent: number, vs: VirtualService, target: RouteTarget): void {
  out.add(`VirtualService: ${kname(vs.metadata, target.viewerNamespace)}`, indent + LEVEL0);
  const http = vs.spec.http ?? [];
  const tcp = vs.spec.tcp ?? [];
  let matches = 0;
  let facts = 0;
  const mismatches: string[] = [];
  const results = [...http.map((r) => httpRouteFacts(vs, r, target)), ...tcp.map((r) => tcpRouteFacts(vs, r, target))];
  for (const result of results) {
    if (!result.match) {
      mismatches.push(...result.facts);
      continue;
    }
    matches++;
    for (const fact of result.facts) {
      out.add(fact, indent + LEVEL1);
      facts++;
    }
  }
  if (matches === 0) {
    if (http.length) out.add(`WARNING: No destinations match pod subsets (checked ${http.length} HTTP routes)`, indent + LEVEL1);
    if (tcp.length) out.add(`WARNING: No destinations match pod subsets (checked ${tcp.length} TCP routes)`, indent + LEVEL1);
    for (const m of mismatches) out.add(m, indent + LEVEL2);
    return;
  }
  const possible = http.length + (vs.spec.tls?.length ?? 0) + tcp.length;
  if (matches < possible) {
    // Earlier match conditions may take traffic first: the pod may not get all of what matched.
    out.add(`${possible - matches} additional destination(s) that will not reach this pod`, indent + LEVEL1);
    if (facts === 0) for (const m of mismatches) out.add(m, indent + LEVEL2);
    return;
  }
  if (facts === 0) {
    if (http.length) out.add(`${http.length} HTTP route(s)`, indent + LEVEL1);
    if (tcp.length) out.add(`${tcp.length} TCP route(s)`, indent + LEVEL1);
  }
}
