import { asObject, asString, fail, has } from '../shared/config';
import { RbacEngine } from './engine';

/** The parts of the HTTP and network RBAC filter configs both filters honour. */
export interface RbacFilterConfig {
  /** Enforced rules; absent means every request or connection passes. */
  readonly rules?: RbacEngine;
  /** Evaluated and reported only. */
  readonly shadowRules?: RbacEngine;
  readonly shadowRulesStatPrefix: string;
}

export function parseRbacFilterConfig(value: unknown, field: string): RbacFilterConfig {
  const config = asObject(value, field);
  // The unified matcher API is an alternative to `rules` the mesh never generates.
  for (const key of ['matcher', 'shadow_matcher']) {
    if (has(config, key)) fail(`${field}.${key}`, 'the xDS matcher API is not supported by the built-in proxy; use rules');
  }
  return {
    rules: has(config, 'rules') ? RbacEngine.compile(config.rules, `${field}.rules`) : undefined,
    shadowRules: has(config, 'shadow_rules') ? RbacEngine.compile(config.shadow_rules, `${field}.shadow_rules`) : undefined,
    shadowRulesStatPrefix: asString(config.shadow_rules_stat_prefix, `${field}.shadow_rules_stat_prefix`),
  };
}
