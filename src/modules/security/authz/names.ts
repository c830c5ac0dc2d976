/** Names the authorization filters carry, as the incumbent's proxies and dashboards know them. */
export {
  EXT_AUTHZ_HTTP_FILTER, EXT_AUTHZ_HTTP_TYPE, EXT_AUTHZ_NETWORK_FILTER, EXT_AUTHZ_NETWORK_TYPE, RBAC_HTTP_FILTER, RBAC_HTTP_TYPE, RBAC_NETWORK_FILTER, RBAC_NETWORK_TYPE,
} from '../../envoy/well-known';


/** Stat prefix of every network RBAC filter (`tcp.rbac.allowed`...). */
export const TCP_STAT_PREFIX = 'tcp.';

/** `"true"` on a policy: evaluate it in shadow mode (stats and logs only), never enforce it. */
export const DRY_RUN_ANNOTATION = 'mesh.io/dry-run';
/** Stat prefixes of the shadow engine, by the action of the shadowed rules. */
export const SHADOW_ALLOW_STAT_PREFIX = 'mesh_dry_run_allow_';
export const SHADOW_DENY_STAT_PREFIX = 'mesh_dry_run_deny_';

/** Policy names of CUSTOM rules start with this, then the provider's name. */
export const EXT_AUTHZ_PREFIX = 'mesh-ext-authz';
/** Stat prefix of the shadow RBAC filter of CUSTOM rules: its metadata key `mesh_ext_authz_shadow_effective_policy_id` enables ext_authz. */
export const EXT_AUTHZ_SHADOW_STAT_PREFIX = 'mesh_ext_authz_';
/** Appended to CUSTOM rules turned into DENY because their provider cannot be used. */
export const BAD_CUSTOM_SUFFIX = '-deny-due-to-bad-CUSTOM-action';

/** `ns[<ns>]-policy[<name>]-rule[<i>]`: the RBAC policy name of one rule, also seen in logs and stats. */
export function rbacPolicyName(namespace: string, name: string, rule: number, customProvider?: string): string {
  const prefix = customProvider === undefined ? '' : `${EXT_AUTHZ_PREFIX}-${customProvider}-`;
  return `${prefix}ns[${namespace}]-policy[${name}]-rule[${rule}]`;
}
