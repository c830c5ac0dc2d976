import type { ConnectionInfo, FilterContext, FilterReport, NetworkFilter, NetworkFilterFactory } from '../../http/filter-api';
import type { RbacEngine, RbacEvaluation } from './engine';
import type { RbacReport } from './http-filter';
import { RbacFilterConfig, parseRbacFilterConfig } from './filter-config';
import { connectionSubject } from './subject';
import { RBAC_NETWORK_TYPE } from '../../../envoy/well-known';

export const NETWORK_RBAC_TYPE_URL = RBAC_NETWORK_TYPE;

/** Envoy's network RBAC: the same engine over the connection alone; a deny closes it. */
export class RbacNetworkFilter implements NetworkFilter {
  constructor(readonly name: string, private readonly config: RbacFilterConfig, private readonly context: FilterContext) {}

  onConnection(connection: ConnectionInfo, trace?: FilterReport[]): 'continue' | 'close' {
    const subject = connectionSubject(connection);
    const peer = `${connection.remoteAddress}:${connection.remotePort}`;
    const explain = trace !== undefined || this.context.debugEnabled?.() === true;
    const run = (engine: RbacEngine) => (explain ? engine.explain(subject) : { ...engine.decide(subject), action: engine.action, policies: [] });
    const report: { shadow?: RbacEvaluation; enforced?: RbacEvaluation } = {};
    if (this.config.shadowRules) {
      const decision = run(this.config.shadowRules);
      if (explain) report.shadow = decision;
      this.context.log('debug', `${this.name}: ${peer} shadow ${decision.allowed ? 'allowed' : 'denied'}, matched policy ${decision.policyId ?? 'none'}${reasons(decision)}`);
    }
    let verdict: 'continue' | 'close' = 'continue';
    const rules = this.config.rules;
    if (rules) {
      const decision = run(rules);
      if (explain) report.enforced = decision;
      this.context.log('debug', `${this.name}: ${peer} enforced ${decision.allowed ? 'allowed' : 'denied'}, matched policy ${decision.policyId ?? 'none'}${reasons(decision)}`);
      if (!decision.allowed) verdict = 'close';
    }
    if (trace) {
      const traced: RbacReport = { filter: this.name, type: 'rbac', ...report };
      trace.push(traced);
    }
    return verdict;
  }
}

function reasons(decision: RbacEvaluation): string {
  return decision.policies.filter((p) => !p.matched).map((p) => `; ${p.name} did not match: ${p.reason}`).join('');
}

export const rbacNetworkFilterFactory: NetworkFilterFactory = {
  typeUrl: NETWORK_RBAC_TYPE_URL,
  create(name, config, context) {
    return new RbacNetworkFilter(name, parseRbacFilterConfig(config, name), context);
  },
};
