import { CONTINUE, FilterContext, FilterOutcome, HttpFilter, HttpFilterFactory, ProxyHttpRequest } from '../../http/filter-api';
import { RbacFilterConfig, parseRbacFilterConfig } from './filter-config';
import { httpSubject } from './subject';
import { RBAC_HTTP_FILTER, RBAC_HTTP_TYPE } from '../../../envoy/well-known';

export const HTTP_RBAC_TYPE_URL = RBAC_HTTP_TYPE;
/** Dynamic metadata namespaces Envoy's HTTP RBAC writes. */
export const HTTP_RBAC_METADATA = RBAC_HTTP_FILTER;
export const COMMON_METADATA = 'envoy.common';

export const RBAC_DENIED_BODY = 'RBAC: access denied';

/** Envoy's HTTP RBAC: shadow rules reported in metadata, enforced rules answer 403 on deny. */
export class RbacHttpFilter implements HttpFilter {
  constructor(readonly name: string, private readonly config: RbacFilterConfig, private readonly context: FilterContext) {}

  onRequest(request: ProxyHttpRequest): FilterOutcome {
    const subject = httpSubject(request);
    const { shadowRules, rules, shadowRulesStatPrefix: prefix } = this.config;
    if (shadowRules) {
      const decision = shadowRules.decide(subject);
      const result: Record<string, unknown> = { [`${prefix}shadow_engine_result`]: decision.allowed ? 'allowed' : 'denied' };
      if (decision.policyId !== undefined) result[`${prefix}shadow_effective_policy_id`] = decision.policyId;
      mergeMetadata(request, HTTP_RBAC_METADATA, result);
      this.context.log('debug', `${this.name}: shadow ${decision.allowed ? 'allowed' : 'denied'}, matched policy ${decision.policyId ?? 'none'}`);
    }
    if (!rules) return CONTINUE;
    const decision = rules.decide(subject);
    if (rules.action === 'LOG') mergeMetadata(request, COMMON_METADATA, { access_log_hint: decision.policyId !== undefined });
    this.context.log('debug', `${this.name}: enforced ${decision.allowed ? 'allowed' : 'denied'}, matched policy ${decision.policyId ?? 'none'}`);
    if (decision.allowed) return CONTINUE;
    return { kind: 'respond', status: 403, body: RBAC_DENIED_BODY, headers: { 'content-type': 'text/plain' } };
  }
}

function mergeMetadata(request: ProxyHttpRequest, namespace: string, fields: Record<string, unknown>): void {
  request.metadata[namespace] = { ...request.metadata[namespace], ...fields };
}

export const rbacHttpFilterFactory: HttpFilterFactory = {
  typeUrl: HTTP_RBAC_TYPE_URL,
  create(name, config, context) {
    return new RbacHttpFilter(name, parseRbacFilterConfig(config, name), context);
  },
};
