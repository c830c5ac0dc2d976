import { injectable } from 'inversify';
import { AnalysisContext, Analyzer } from '../analyzer';
import { AnalysisObject, asArray, field } from '../objects';
import { fullName, hostsOverlap, labelMap, labelsMatch, selectorString } from './common';

interface Server {
  gw: AnalysisObject;
  index: number;
  port: number;
  hosts: string[];
  selector: string;
  pods: Set<string>;
}

/**
 * gateway.ConflictingGatewayAnalyzer: two Gateways that land on the same workload (the same
 * selector, or selectors picking a common pod) with a server on the same port and overlapping
 * hosts conflict; each server says with which others.
 */
@injectable()
export class ConflictingGatewayAnalyzer implements Analyzer {
  readonly metadata = {
    name: 'gateway.ConflictingGatewayAnalyzer',
    description: 'Checks a gateway\'s selector, port number and hosts',
    inputs: ['Gateway', 'Pod'],
  };

  analyze(ctx: AnalysisContext): void {
    const pods = ctx.objects.of('Pod');
    const servers: Server[] = [];
    for (const gw of ctx.objects.of('Gateway')) {
      const labels = labelMap(field(gw.raw, 'spec', 'selector'));
      const selected = new Set(pods.filter((p) => labelsMatch(labels, p.labels)).map((p) => `${p.namespace}/${p.name}`));
      asArray(field(gw.raw, 'spec', 'servers')).forEach((s, index) => {
        const port = field(s, 'port', 'number');
        if (typeof port !== 'number') return;
        const hosts = asArray(field(s, 'hosts')).filter((h): h is string => typeof h === 'string');
        servers.push({ gw, index, port, hosts, selector: selectorString(labels), pods: selected });
      });
    }
    const sameWorkload = (a: Server, b: Server) => a.selector === b.selector || [...a.pods].some((p) => b.pods.has(p));
    for (const s of servers) {
      const others = new Set<string>();
      for (const o of servers) {
        if (o.gw === s.gw || o.port !== s.port || !sameWorkload(s, o)) continue;
        if (s.hosts.some((h) => o.hosts.some((oh) => hostsOverlap(h, oh)))) others.add(fullName(o.gw));
      }
      if (others.size) ctx.report('ConflictingGateways', s.gw, [[...others].sort().join(','), s.selector, String(s.port), s.hosts], `spec.servers[${s.index}]`);
    }
  }
}
