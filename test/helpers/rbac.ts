/**
 * The `principal_name.exact` values of the RBAC rules in a decoded listener, by RBAC policy
 * name, in order and once each (every chain of a listener carries the same filters).
 */
export function principalsByPolicy(listener: unknown): Record<string, string[]> {
  const out: Record<string, string[]> = {};
  const walk = (value: unknown, policy: string): void => {
    if (Array.isArray(value)) return value.forEach((v) => walk(v, policy));
    if (!value || typeof value !== 'object') return;
    for (const [k, v] of Object.entries(value)) {
      if (k === 'policies' && v && typeof v === 'object') {
        for (const [name, p] of Object.entries(v)) walk(p, name);
      } else if (k === 'principal_name') {
        const exact = (v as { exact?: string }).exact;
        if (exact && !(out[policy] ??= []).includes(exact)) out[policy].push(exact);
      } else {
        walk(v, policy);
      }
    }
  };
  walk(listener, '');
  return out;
}

/** Every principal name of the listener's RBAC rules, whatever the policy, once each. */
export function principalNames(listener: unknown): string[] {
  return [...new Set(Object.values(principalsByPolicy(listener)).flat())];
}
