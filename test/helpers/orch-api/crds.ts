import { isObject } from './json-patch';
import { type CrdObject, crdType, type JsonSchema, resourceKey, type ResourceRegistry, type ResourceType } from './resources';
import type { ListStrategy } from './strategic-merge';
import type { Store } from './store';

/*
 * CustomResourceDefinitions come alive: a stored CRD registers its resource for every served
 * version (discovery and routing see it at once), a changed one re-registers, and a deleted one
 * takes its objects with it (the real server's customresourcecleanup finalizer, done at once).
 */

export const CRDS = resourceKey('apiextensions.k8s.io', 'customresourcedefinitions');

export function watchCrds(store: Store, registry: ResourceRegistry, onTypeRemoved: (key: string) => void): void {
  store.onChange((event) => {
    if (event.key !== CRDS) return;
    const before = event.previous ? crdType(event.previous as unknown as CrdObject) : undefined;
    if (event.type === 'DELETED') {
      if (!before) return;
      registry.remove(before.group, before.plural);
      const key = resourceKey(before.group, before.plural);
      for (const obj of store.items(key)) store.commit('DELETED', key, obj, obj);
      onTypeRemoved(key);
      return;
    }
    const after = crdType(event.object as unknown as CrdObject);
    if (before && (!after || before.group !== after.group || before.plural !== after.plural)) {
      registry.remove(before.group, before.plural);
      onTypeRemoved(resourceKey(before.group, before.plural));
    }
    if (after) registry.add(after);
  });
}

/** The openAPIV3Schema of a custom type at a version. */
export function crdSchema(type: ResourceType, version: string): JsonSchema | undefined {
  return type.crd?.spec.versions.find((v) => v.name === version)?.schema?.openAPIV3Schema;
}

/** List merging for server-side apply of custom objects: x-kubernetes-list-type map/set, else atomic. */
export function crdListStrategy(schema: JsonSchema | undefined): (path: readonly string[]) => ListStrategy {
  return (path) => {
    let node: JsonSchema | undefined = schema;
    for (const field of path) {
      if (!node) break;
      while (node && node.type === 'array') node = node.items;
      node = node?.properties?.[field] ?? (isObject(node?.additionalProperties) ? (node?.additionalProperties as JsonSchema) : undefined);
    }
    const listType = node?.['x-kubernetes-list-type'];
    if (listType === 'map' && Array.isArray(node?.['x-kubernetes-list-map-keys'])) return { kind: 'map', keys: node['x-kubernetes-list-map-keys'] as string[] };
    if (listType === 'set') return { kind: 'set' };
    return { kind: 'atomic' };
  };
}
