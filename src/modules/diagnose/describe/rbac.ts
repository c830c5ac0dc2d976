/**
 * The RBAC policies a pod's proxy enforces on an inbound port: the names of the rules in the
 * RBAC filters the mesh generates for the pod's inbound chain of that kind (HTTP or TCP), as
 * the incumbent lists them from the proxy's RBAC filter.
 */
import type { EnvoyFilter } from '../../model/generator';
import type { PushContext } from '../../model/push-context';
import { RBAC_HTTP_FILTER, RBAC_NETWORK_FILTER, TrustDomainBundle } from '../../security/authz';
import { authzFiltersFor } from '../../security/authz/contributors';

/** Enforced rule names of the pod's RBAC filters for `chain`, in filter order (CUSTOM, AUDIT, DENY, ALLOW). */
export function rbacPolicyNames(push: PushContext, workload: { namespace: string; labels: Record<string, string> }, chain: 'http' | 'tcp', trustDomains: TrustDomainBundle): string[] {
  const filters: readonly EnvoyFilter[] = authzFiltersFor(push, workload, chain, trustDomains);
  const names: string[] = [];
  for (const filter of filters) {
    if (filter.name !== RBAC_HTTP_FILTER && filter.name !== RBAC_NETWORK_FILTER) continue;
    const rules = filter.typed_config.rules as { policies?: Record<string, unknown> } | undefined;
    for (const name of Object.keys(rules?.policies ?? {})) if (!names.includes(name)) names.push(name);
  }
  return names;
}
