import { groupVersion, type ResourceRegistry, type ResourceType } from './resources';

/*
 * Discovery documents: the legacy ones (/api APIVersions, /apis APIGroupList, per group
 * APIGroup, per group/version APIResourceList) and the aggregated apidiscovery.k8s.io/v2
 * APIGroupDiscoveryList that kubectl 1.30+ asks for first (Accept ...;as=APIGroupDiscoveryList).
 */

export const AGGREGATED_CONTENT_TYPE = 'application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList';

const VERBS = ['create', 'delete', 'deletecollection', 'get', 'list', 'patch', 'update', 'watch'];

interface Subresource {
  name: string;
  kind: { group: string; version: string; kind: string } | undefined;
  verbs: string[];
}

function subresourcesOf(type: ResourceType, version: string): (Subresource & { kind: NonNullable<Subresource['kind']> })[] {
  return type.subresources.map((name): Subresource => {
    switch (name) {
      case 'scale':
        return { name, kind: { group: 'autoscaling', version: 'v1', kind: 'Scale' }, verbs: ['get', 'patch', 'update'] };
      case 'token':
        return { name, kind: { group: 'authentication.k8s.io', version: 'v1', kind: 'TokenRequest' }, verbs: ['create'] };
      case 'finalize':
        return { name, kind: undefined, verbs: ['update'] };
      default:
        return { name, kind: undefined, verbs: ['get', 'patch', 'update'] };
    }
  }).map((s) => ({ ...s, kind: s.kind ?? { group: type.group, version, kind: type.kind } }));
}

/** Whether the client asked for aggregated discovery (v2) and accepts it. */
export function wantsAggregated(accept: string | undefined): boolean {
  return !!accept && /as=APIGroupDiscoveryList/.test(accept) && /v=v2(;|,|$)/.test(accept.replace(/\s/g, ''));
}

export function apiVersions(serverAddress: string): object {
  return { kind: 'APIVersions', versions: ['v1'], serverAddressByClientCIDRs: [{ clientCIDR: '0.0.0.0/0', serverAddress }] };
}

export function apiGroup(registry: ResourceRegistry, group: string): object | undefined {
  const versions = registry.groups().get(group);
  if (!versions || group === '') return undefined;
  const entries = versions.map((v) => ({ groupVersion: `${group}/${v}`, version: v }));
  return { kind: 'APIGroup', apiVersion: 'v1', name: group, versions: entries, preferredVersion: entries[0] };
}

export function apiGroupList(registry: ResourceRegistry): object {
  const groups = [...registry.groups().entries()]
    .filter(([g]) => g !== '')
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([group]) => {
      const g = apiGroup(registry, group) as { name: string; versions: unknown[]; preferredVersion: unknown };
      return { name: g.name, versions: g.versions, preferredVersion: g.preferredVersion };
    });
  return { kind: 'APIGroupList', apiVersion: 'v1', groups };
}

export function apiResourceList(registry: ResourceRegistry, group: string, version: string): object | undefined {
  const types = registry.inGroupVersion(group, version).sort((a, b) => a.plural.localeCompare(b.plural));
  if (types.length === 0) return undefined;
  const resources: object[] = [];
  for (const t of types) {
    resources.push({
      name: t.plural,
      singularName: t.singular,
      namespaced: t.namespaced,
      kind: t.kind,
      verbs: t.verbs ?? VERBS,
      ...(t.shortNames.length ? { shortNames: t.shortNames } : {}),
      ...(t.categories.length ? { categories: t.categories } : {}),
    });
    for (const s of subresourcesOf(t, version)) {
      resources.push({
        name: `${t.plural}/${s.name}`,
        singularName: '',
        namespaced: t.namespaced,
        ...(s.kind.group !== group || s.kind.version !== version ? { group: s.kind.group, version: s.kind.version } : {}),
        kind: s.kind.kind,
        verbs: s.verbs,
      });
    }
  }
  return { kind: 'APIResourceList', apiVersion: 'v1', groupVersion: groupVersion(group, version), resources };
}

/** The aggregated document of the core group (/api) or of every other group (/apis). */
export function aggregated(registry: ResourceRegistry, core: boolean): object {
  const items = [...registry.groups().entries()]
    .filter(([g]) => (g === '') === core)
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([group, versions]) => ({
      metadata: core ? {} : { name: group },
      versions: versions.map((version) => ({
        version,
        resources: registry
          .inGroupVersion(group, version)
          .sort((a, b) => a.plural.localeCompare(b.plural))
          .map((t) => ({
            resource: t.plural,
            responseKind: { group, version, kind: t.kind },
            scope: t.namespaced ? 'Namespaced' : 'Cluster',
            singularResource: t.singular,
            verbs: t.verbs ?? VERBS,
            ...(t.shortNames.length ? { shortNames: t.shortNames } : {}),
            ...(t.categories.length ? { categories: t.categories } : {}),
            ...(t.subresources.length
              ? { subresources: subresourcesOf(t, version).map((s) => ({ subresource: s.name, responseKind: s.kind, verbs: s.verbs })) }
              : {}),
          })),
        freshness: 'Current',
      })),
    }));
  return { kind: 'APIGroupDiscoveryList', apiVersion: 'apidiscovery.k8s.io/v2', metadata: {}, items };
}
