/**
 * The Envoy RBAC messages this module builds, as plain objects in the protos' snake_case
 * (`envoy.config.rbac.v3`), ready for `encodeMessage`. Only the fields we generate are typed.
 */

export interface StringMatcher {
  exact?: string;
  prefix?: string;
  suffix?: string;
  safe_regex?: { regex: string };
  ignore_case?: boolean;
}

export interface HeaderMatcher {
  name: string;
  string_match?: StringMatcher;
  present_match?: boolean;
}

export interface CidrRange {
  address_prefix: string;
  prefix_len: { value: number };
}

export interface ValueMatcher {
  string_match?: StringMatcher;
  list_match?: { one_of: ValueMatcher };
  or_match?: { value_matchers: ValueMatcher[] };
}

export interface MetadataMatcher {
  filter: string;
  path: { key: string }[];
  value: ValueMatcher;
}

export interface TypedExtensionConfig {
  name: string;
  typed_config: { '@type': string; [field: string]: unknown };
}

export interface Permission {
  any?: boolean;
  and_rules?: { rules: Permission[] };
  or_rules?: { rules: Permission[] };
  not_rule?: Permission;
  header?: HeaderMatcher;
  url_path?: { path: StringMatcher };
  uri_template?: TypedExtensionConfig;
  destination_ip?: CidrRange;
  destination_port?: number;
  requested_server_name?: StringMatcher;
  metadata?: MetadataMatcher;
}

export interface Principal {
  any?: boolean;
  and_ids?: { ids: Principal[] };
  or_ids?: { ids: Principal[] };
  not_id?: Principal;
  authenticated?: { principal_name: StringMatcher };
  direct_remote_ip?: CidrRange;
  remote_ip?: CidrRange;
  header?: HeaderMatcher;
  metadata?: MetadataMatcher;
}

export interface RbacPolicy {
  permissions: Permission[];
  principals: Principal[];
}

/** `envoy.config.rbac.v3.RBAC.Action`; LOG is what an AUDIT policy becomes. */
export type RbacAction = 'ALLOW' | 'DENY' | 'LOG';

export interface RbacRules {
  action: RbacAction;
  /** Keyed by `ns[<ns>]-policy[<name>]-rule[<i>]`. */
  policies: Record<string, RbacPolicy>;
}

/** and/or/not/any for one side of a policy, so rule generation is written once for both. */
export interface Combinators<M> {
  and(list: M[]): M;
  or(list: M[]): M;
  not(m: M): M;
  any(): M;
}

export const PERMISSION: Combinators<Permission> = {
  and: (rules) => ({ and_rules: { rules } }),
  or: (rules) => ({ or_rules: { rules } }),
  not: (rule) => ({ not_rule: rule }),
  any: () => ({ any: true }),
};

export const PRINCIPAL: Combinators<Principal> = {
  and: (ids) => ({ and_ids: { ids } }),
  or: (ids) => ({ or_ids: { ids } }),
  not: (id) => ({ not_id: id }),
  any: () => ({ any: true }),
};
