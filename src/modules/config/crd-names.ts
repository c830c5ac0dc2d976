import { KindDefinition } from './kind';

/** How the orchestrator API names a mesh kind (its CustomResourceDefinition's `names`). */
export interface CrdNames {
  kind: string;
  listKind: string;
  plural: string;
  singular: string;
  shortNames: string[];
  categories: string[];
}

/** The incumbent's short names. */
const SHORT_NAMES: Record<string, string[]> = {
  AuthorizationPolicy: ['ap'],
  DestinationRule: ['dr'],
  Gateway: ['gw'],
  PeerAuthentication: ['pa'],
  RequestAuthentication: ['ra'],
  ServiceEntry: ['se'],
  VirtualService: ['vs'],
  WorkloadEntry: ['we'],
  WorkloadGroup: ['wg'],
};

/** `serviceentries`, `authorizationpolicies`, `gateways`: English plurals as the incumbent spells them. */
function plural(lower: string): string {
  if (/[^aeiou]y$/.test(lower)) return `${lower.slice(0, -1)}ies`;
  if (/(s|x|ch|sh)$/.test(lower)) return `${lower}es`;
  return `${lower}s`;
}

export function crdNames(def: Pick<KindDefinition, 'kind' | 'group'>): CrdNames {
  const singular = def.kind.toLowerCase();
  return {
    kind: def.kind,
    listKind: `${def.kind}List`,
    plural: plural(singular),
    singular,
    shortNames: SHORT_NAMES[def.kind] ?? [],
    // `mesh-io` for all, and the group's own (`networking-mesh-io`), as the incumbent categorizes.
    categories: ['mesh-io', def.group.replace(/\./g, '-')],
  };
}

/** The version the definitions store (and the daemon watches): the first, newest one. */
export function storageVersion(def: Pick<KindDefinition, 'versions'>): string {
  return def.versions[0];
}
