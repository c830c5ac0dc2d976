/**
 * AuthorizationPolicies in force for a workload → the RBAC filters of its inbound chains, in
 * chain order: CUSTOM fallbacks, then AUDIT (action LOG), DENY, ALLOW, one filter each. The
 * proxy runs them in turn, so a request denied by the DENY filter never reaches ALLOW.
 */
import { AuthorizationPolicySpec } from '../../config/kinds/authorization-policy';
import { ConfigResource } from '../../config/resource';
import { EnvoyFilter } from '../../model/generator';
import {
  BAD_CUSTOM_SUFFIX,
  DRY_RUN_ANNOTATION,
  RBAC_HTTP_FILTER,
  RBAC_HTTP_TYPE,
  RBAC_NETWORK_FILTER,
  RBAC_NETWORK_TYPE,
  rbacPolicyName,
  SHADOW_ALLOW_STAT_PREFIX,
  SHADOW_DENY_STAT_PREFIX,
  TCP_STAT_PREFIX,
} from './names';
import { PERMISSION, PRINCIPAL, RbacAction, RbacPolicy, RbacRules } from './rbac-types';
import { RuleModel } from './rule-model';
import { TrustDomainBundle } from './trust-domain';

export type AuthorizationPolicy = ConfigResource<AuthorizationPolicySpec>;

/** HTTP connection manager chains get HTTP filters; other (TCP) chains network filters. */
export type ChainKind = 'http' | 'tcp';

/** Where skipped rules and fallbacks are reported (the daemon's `authorization` scope). */
export interface AuthzLog {
  debug(msg: string): void;
  error(msg: string): void;
}

export const SILENT_LOG: AuthzLog = { debug: () => undefined, error: () => undefined };

export interface BuildOptions {
  trustDomains: TrustDomainBundle;
  chain: ChainKind;
  log?: AuthzLog;
}

/** A policy set never matched: what a policy without rules is (it selects, but allows nothing). */
const MATCH_NEVER: RbacPolicy = {
  permissions: [PERMISSION.not(PERMISSION.any())],
  principals: [PRINCIPAL.not(PRINCIPAL.any())],
};

/** The rules of one filter: enforced, and shadow (dry-run) ones; either may be absent. */
interface BuiltRules {
  rules?: RbacRules;
  shadowRules?: RbacRules;
}

/**
 * The RBAC filters for `policies` (already selected for the workload, root namespace first).
 * An ALLOW action with no policy gives no filter (everything is allowed); a policy with no
 * rules still gives its filter, with a rule that never matches.
 */
export function buildAuthzFilters(policies: readonly AuthorizationPolicy[], options: BuildOptions): EnvoyFilter[] {
  const log = options.log ?? SILENT_LOG;
  const byAction = (action: string) => policies.filter((p) => (p.spec.action ?? 'ALLOW') === action);
  const filters = customFallbackFilters(byAction('CUSTOM'), options, log);
  for (const [action, rbac] of [['AUDIT', 'LOG'], ['DENY', 'DENY'], ['ALLOW', 'ALLOW']] as const) {
    const selected = byAction(action);
    if (selected.length === 0) continue;
    const built = buildRules(selected, rbac, options, log);
    filters.push(rbacFilter(options.chain, built, shadowStatPrefix(built.shadowRules)));
  }
  return filters;
}

/**
 * CUSTOM policies delegate to an extension provider of the mesh config. This project has no
 * extension providers yet, so every provider is unknown; the incumbent then fails closed:
 * the policy's rules become a DENY filter (names suffixed `-deny-due-to-bad-CUSTOM-action`),
 * one per provider, logged as an error. Dry-run CUSTOM policies are left out of it.
 */
function customFallbackFilters(policies: readonly AuthorizationPolicy[], options: BuildOptions, log: AuthzLog): EnvoyFilter[] {
  const providers = [...new Set(policies.map((p) => p.spec.provider?.name ?? ''))].sort();
  return providers.map((provider) => {
    log.error(`failed to process CUSTOM action for provider ${provider}, will generate deny configs: extension provider ${provider} not found (no extension providers are configured)`);
    const built = buildRules(policies.filter((p) => (p.spec.provider?.name ?? '') === provider), 'DENY', options, log, provider);
    const policiesOut: Record<string, RbacPolicy> = {};
    for (const [name, policy] of Object.entries(built.rules?.policies ?? {})) policiesOut[name + BAD_CUSTOM_SUFFIX] = policy;
    return rbacFilter(options.chain, { rules: { action: 'DENY', policies: policiesOut } });
  });
}

function buildRules(policies: readonly AuthorizationPolicy[], action: RbacAction, options: BuildOptions, log: AuthzLog, customProvider?: string): BuiltRules {
  const enforced: RbacRules = { action, policies: {} };
  const shadow: RbacRules = { action, policies: {} };
  let anyEnforced = false;
  let anyShadow = false;
  const forTcp = options.chain === 'tcp';
  for (const policy of policies) {
    const dryRun = isDryRun(policy, log);
    const target = dryRun ? shadow : enforced;
    if (dryRun) anyShadow = true;
    else anyEnforced = true;
    const { namespace, name } = policy.metadata;
    const rules = policy.spec.rules ?? [];
    rules.forEach((rule, i) => {
      const ruleName = rbacPolicyName(namespace, name, i, customProvider);
      if (!rule) return log.error(`skipped nil rule ${ruleName}`);
      let model: RuleModel;
      try {
        model = RuleModel.of(rule, namespace, options.trustDomains);
      } catch (err) {
        return log.error(`skipped invalid rule ${ruleName}: ${(err as Error).message}`);
      }
      try {
        target.policies[ruleName] = model.generate(forTcp, action);
        log.debug(`generated config from rule ${ruleName} on ${forTcp ? 'TCP' : 'HTTP'} filter chain successfully`);
      } catch (err) {
        log.debug(`skipped rule ${ruleName} on ${forTcp ? 'TCP' : 'HTTP'} filter chain: ${(err as Error).message}`);
      }
    });
    if (rules.length === 0) target.policies[rbacPolicyName(namespace, name, 0, customProvider)] = MATCH_NEVER;
  }
  return { rules: anyEnforced ? enforced : undefined, shadowRules: anyShadow ? shadow : undefined };
}

/**
 * The shadow engine's stat prefix follows the shadow rules' action; with no shadow rules the
 * incumbent still sets the ALLOW one (its default action), so every filter names a prefix.
 */
function shadowStatPrefix(shadow: RbacRules | undefined): string {
  switch (shadow?.action ?? 'ALLOW') {
    case 'ALLOW':
      return SHADOW_ALLOW_STAT_PREFIX;
    case 'DENY':
      return SHADOW_DENY_STAT_PREFIX;
    default:
      return '';
  }
}

function rbacFilter(chain: ChainKind, built: BuiltRules, shadowPrefix = ''): EnvoyFilter {
  const config: EnvoyFilter['typed_config'] = { '@type': chain === 'http' ? RBAC_HTTP_TYPE : RBAC_NETWORK_TYPE };
  if (built.rules) config.rules = built.rules;
  if (chain === 'tcp') config.stat_prefix = TCP_STAT_PREFIX;
  if (built.shadowRules) config.shadow_rules = built.shadowRules;
  if (shadowPrefix !== '') config.shadow_rules_stat_prefix = shadowPrefix;
  return { name: chain === 'http' ? RBAC_HTTP_FILTER : RBAC_NETWORK_FILTER, typed_config: config };
}

/** The dry-run annotation, read as a boolean the incumbent's way; anything else is logged and means false. */
export function isDryRun(policy: AuthorizationPolicy, log: AuthzLog = SILENT_LOG): boolean {
  const value = policy.metadata.annotations?.[DRY_RUN_ANNOTATION];
  if (value === undefined) return false;
  if (['1', 't', 'T', 'true', 'TRUE', 'True'].includes(value)) return true;
  if (['0', 'f', 'F', 'false', 'FALSE', 'False'].includes(value)) return false;
  log.error(`failed to parse the value of ${DRY_RUN_ANNOTATION} on ${policy.metadata.namespace}/${policy.metadata.name}: "${value}" is not a boolean`);
  return false;
}
