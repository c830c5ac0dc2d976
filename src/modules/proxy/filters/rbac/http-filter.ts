import { CONTINUE, FilterContext, FilterOutcome, FilterReport, HttpFilter, HttpFilterFactory, ProxyHttpRequest } from '../../http/filter-api';
import { RbacDecision, RbacEngine, RbacEvaluation } from './engine';
import { RbacFilterConfig, parseRbacFilterConfig } from './filter-config';
import { httpSubject, RbacSubject } from './subject';
import { RBAC_HTTP_FILTER, RBAC_HTTP_TYPE } from '../../../envoy/well-known';

export const HTTP_RBAC_TYPE_URL = RBAC_HTTP_TYPE;
/** Dynamic metadata namespaces Envoy's HTTP RBAC writes. */
export const HTTP_RBAC_METADATA = RBAC_HTTP_FILTER;
export const COMMON_METADATA = 'envoy.common';

export const RBAC_DENIED_BODY = 'RBAC: access denied';

/** An RBAC filter's report on a traced request: each engine it ran, with every policy's outcome. */
export interface RbacReport extends FilterReport {
  readonly type: 'rbac';
  readonly shadow?: RbacEvaluation;
  readonly enforced?: RbacEvaluation;
}

/** Envoy's HTTP RBAC: shadow rules reported in metadata, enforced rules answer 403 on deny. */
export class RbacHttpFilter implements HttpFilter {
  constructor(readonly name: string, private readonly config: RbacFilterConfig, private readonly context: FilterContext) {}

  onRequest(request: ProxyHttpRequest): FilterOutcome {
    const subject = httpSubject(request);
    const { shadowRules, rules, shadowRulesStatPrefix: prefix } = this.config;
    // Explanations cost a second look at each policy: only for traced requests or a debug log.
    const explain = request.trace !== undefined || this.context.debugEnabled?.() === true;
    const report: { shadow?: RbacEvaluation; enforced?: RbacEvaluation } = {};
    if (shadowRules) {
      const decision = evaluate(shadowRules, subject, explain);
      if ('policies' in decision) report.shadow = decision;
      const result: Record<string, unknown> = { [`${prefix}shadow_engine_result`]: decision.allowed ? 'allowed' : 'denied' };
      if (decision.policyId !== undefined) result[`${prefix}shadow_effective_policy_id`] = decision.policyId;
      mergeMetadata(request, HTTP_RBAC_METADATA, result);
      this.context.log('debug', `${this.name}: shadow ${decision.allowed ? 'allowed' : 'denied'}, matched policy ${decision.policyId ?? 'none'}${reasons(decision)}`);
    }
    let outcome: FilterOutcome = CONTINUE;
    if (rules) {
      const decision = evaluate(rules, subject, explain);
      if ('policies' in decision) report.enforced = decision;
      if (rules.action === 'LOG') mergeMetadata(request, COMMON_METADATA, { access_log_hint: decision.policyId !== undefined });
      this.context.log('debug', `${this.name}: enforced ${decision.allowed ? 'allowed' : 'denied'}, matched policy ${decision.policyId ?? 'none'}${reasons(decision)}`);
      if (!decision.allowed) outcome = { kind: 'respond', status: 403, body: RBAC_DENIED_BODY, headers: { 'content-type': 'text/plain' } };
    }
    if (request.trace) {
      const traced: RbacReport = { filter: this.name, type: 'rbac', ...report };
      request.trace.push(traced);
    }
    return outcome;
  }
}

function evaluate(engine: RbacEngine, subject: RbacSubject, explain: boolean): RbacDecision | RbacEvaluation {
  return explain ? engine.explain(subject) : engine.decide(subject);
}

/** `; <policy>: <reason>` for each policy that did not match, when the decision was explained. */
function reasons(decision: RbacDecision | RbacEvaluation): string {
  if (!('policies' in decision)) return '';
  return decision.policies.filter((p) => !p.matched).map((p) => `; ${p.name} did not match: ${p.reason}`).join('');
}

function mergeMetadata(request: ProxyHttpRequest, namespace: string, fields: Record<string, unknown>): void {
  const existing = request.metadata[namespace];
  // Object.assign, not spreads: properties added to a spread copy cost V8 a slow path per request.
  request.metadata[namespace] = existing ? Object.assign({}, existing, fields) : Object.assign({}, fields);
}

export const rbacHttpFilterFactory: HttpFilterFactory = {
  typeUrl: HTTP_RBAC_TYPE_URL,
  create(name, config, context) {
    return new RbacHttpFilter(name, parseRbacFilterConfig(config, name), context);
  },
};
