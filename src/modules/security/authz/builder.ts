/**
 * AuthorizationPolicies in force for a workload → the RBAC filters of its inbound chains, in
 * chain order: CUSTOM (a shadow RBAC filter and ext_authz, or a DENY filter when the provider
 * cannot be used), then AUDIT (action LOG), DENY, ALLOW, one filter each. The
 * proxy runs them in turn, so a request denied by the DENY filter never reaches ALLOW.
 */
import { AuthorizationPolicySpec } from '../../config/kinds/authorization-policy';
import { ConfigResource } from '../../config/resource';
import { EnvoyFilter } from '../../model/generator';
import { BuiltExtAuthz } from './ext-authz';
import {
  BAD_CUSTOM_SUFFIX,
  DRY_RUN_ANNOTATION,
  EXT_AUTHZ_HTTP_FILTER,
  EXT_AUTHZ_NETWORK_FILTER,
  EXT_AUTHZ_SHADOW_STAT_PREFIX,
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
  /** The mesh config's external authorizers by provider name (extAuthzProviders); none = every CUSTOM provider is unknown. */
  extAuthz?: ReadonlyMap<string, BuiltExtAuthz>;
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
  const filters = customFilters(byAction('CUSTOM'), options, log);
  for (const [action, rbac] of [['AUDIT', 'LOG'], ['DENY', 'DENY'], ['ALLOW', 'ALLOW']] as const) {
    const selected = byAction(action);
    if (selected.length === 0) continue;
    const built = buildRules(selected, rbac, options, log);
    filters.push(rbacFilter(options.chain, built, shadowStatPrefix(built.shadowRules)));
  }
  return filters;
}

/**
 * CUSTOM policies delegate to an extension provider of the mesh config, per provider (sorted
 * by name): an RBAC filter whose shadow rules are the policies' rules (it enforces nothing, it
 * tags a matching request with its policy name, `mesh-ext-authz-<provider>-...`), then the
 * provider's ext_authz filter, enabled only for tagged requests. TCP chains get the pair only
 * for gRPC providers (an HTTP authorizer cannot check a connection). As the incumbent does,
 * a provider that is not defined or cannot be used, or a workload whose CUSTOM policies name
 * several providers, fails closed: the rules become a DENY filter (names suffixed
 * `-deny-due-to-bad-CUSTOM-action`), logged as an error. Dry-run CUSTOM policies are left out.
 */
function customFilters(policies: readonly AuthorizationPolicy[], options: BuildOptions, log: AuthzLog): EnvoyFilter[] {
  const providers = [...new Set(policies.map((p) => p.spec.provider?.name ?? ''))].sort();
  const built = new Map(providers.map((provider) => [provider, buildRules(policies.filter((p) => (p.spec.provider?.name ?? '') === provider), 'DENY', options, log, provider)]));
  for (const [provider, rules] of built) {
    if (rules.shadowRules) log.debug(`dry-run CUSTOM policies of provider ${provider} are not evaluated (the check would still be made)`);
  }
  const denyAll = (provider: string, why: string): EnvoyFilter => {
    log.error(`failed to process CUSTOM action for provider ${provider}, will generate deny configs: ${why}`);
    return badCustomFilter(options.chain, built.get(provider)!.rules);
  };
  if (providers.length > 1) {
    const why = `only 1 provider can be used per workload, found multiple providers: [${providers.join(' ')}]`;
    return providers.map((provider) => denyAll(provider, why));
  }
  const filters: EnvoyFilter[] = [];
  for (const provider of providers) {
    const rules = built.get(provider)!.rules;
    if (!rules) continue;
    const ext = options.extAuthz?.get(provider);
    if (!ext || ext.error) {
      const known = [...(options.extAuthz?.keys() ?? [])].sort();
      filters.push(denyAll(provider, ext?.error ?? `available providers are [${known.join(' ')}] but found "${provider}"`));
      continue;
    }
    const extConfig = options.chain === 'http' ? ext.http : ext.tcp;
    if (!extConfig) {
      log.debug(`ignored CUSTOM action with HTTP provider on TCP filter chain for provider ${provider}`);
      continue;
    }
    filters.push(rbacFilter(options.chain, { shadowRules: rules }, EXT_AUTHZ_SHADOW_STAT_PREFIX));
    filters.push({ name: options.chain === 'http' ? EXT_AUTHZ_HTTP_FILTER : EXT_AUTHZ_NETWORK_FILTER, typed_config: extConfig as EnvoyFilter['typed_config'] });
  }
  return filters;
}

/** The rules of a CUSTOM provider that cannot be used, as enforced DENY rules. */
function badCustomFilter(chain: ChainKind, rules: RbacRules | undefined): EnvoyFilter {
  const policies: Record<string, RbacPolicy> = {};
  for (const [name, policy] of Object.entries(rules?.policies ?? {})) policies[name + BAD_CUSTOM_SUFFIX] = policy;
  return rbacFilter(chain, { rules: { action: 'DENY', policies } });
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
