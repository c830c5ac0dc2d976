import { alignColumns } from './columns';
import { ConfigDump, list, obj, requireSection, str } from './dump';

const ACTION_ORDER = ['DENY', 'ALLOW', 'LOG', 'CUSTOM'];
const EXT_AUTHZ_PREFIX = 'mesh-ext-authz-';
const ANONYMOUS = '_anonymous_match_nothing_';

/** The RBAC filter configs (network and HTTP) of every listener's filter chains. */
function rbacConfigs(dump: ConfigDump): Record<string, unknown>[] {
  const section = requireSection(dump, 'ListenersConfigDump');
  const listeners = [
    ...list(section.static_listeners).map((l) => obj(obj(l).listener)),
    ...list(section.dynamic_listeners).map((l) => obj(obj(obj(l).active_state).listener)),
  ];
  const found: Record<string, unknown>[] = [];
  for (const listener of listeners) {
    const chains = [...list(listener.filter_chains), ...(listener.default_filter_chain ? [listener.default_filter_chain] : [])].map(obj);
    for (const filter of chains.flatMap((c) => list(c.filters).map(obj))) {
      const config = obj(filter.typed_config);
      if (str(filter.name) === 'envoy.filters.network.rbac') found.push(config);
      if (str(filter.name) === 'envoy.filters.network.http_connection_manager') {
        for (const http of list(config.http_filters).map(obj)) if (str(http.name) === 'envoy.filters.http.rbac') found.push(obj(http.typed_config));
      }
    }
  }
  return found;
}

/** `<name>.<namespace>` and the rule of a generated policy name `ns[..]-policy[..]-rule[..]`. */
function parsePolicyName(name: string): { policy: string; rule: string } {
  const m = /^ns\[(.*)\]-policy\[(.*)\]-rule\[(.*)\]$/.exec(name);
  return m ? { policy: `${m[2]}.${m[1]}`, rule: m[3] } : { policy: name, rule: name };
}

/** ACTION, AuthorizationPolicy, RULES: one row per policy, its distinct rules counted. */
export function authzCheckTable(dump: ConfigDump): string {
  const rules = new Map<string, { action: string; policy: string; rules: Set<string> }>();
  const add = (action: string, policy: string, rule: string) => {
    const key = `${action}\u0000${policy}`;
    if (!rules.has(key)) rules.set(key, { action, policy, rules: new Set() });
    rules.get(key)!.rules.add(rule);
  };
  for (const config of rbacConfigs(dump)) {
    if (config.rules !== undefined) {
      const r = obj(config.rules);
      const names = Object.keys(obj(r.policies));
      if (names.length === 0) add(str(r.action) || 'ALLOW', ANONYMOUS, '');
      for (const name of names) {
        const { policy, rule } = parsePolicyName(name);
        add(str(r.action) || 'ALLOW', policy, rule);
      }
    }
    // Shadow rules are dry runs, except the ext-authz ones, which stand for CUSTOM policies.
    for (const name of Object.keys(obj(obj(config.shadow_rules).policies))) {
      if (!name.startsWith(EXT_AUTHZ_PREFIX)) continue;
      const { policy, rule } = parsePolicyName(name.slice(EXT_AUTHZ_PREFIX.length));
      add('CUSTOM', policy, rule);
    }
  }
  const rows = [...rules.values()]
    .sort((a, b) => ACTION_ORDER.indexOf(a.action) - ACTION_ORDER.indexOf(b.action) || (a.policy < b.policy ? -1 : a.policy > b.policy ? 1 : 0))
    .map((e) => [e.action, e.policy, String(e.rules.size)]);
  return alignColumns([['ACTION', 'AuthorizationPolicy', 'RULES'], ...rows], 3);
}
