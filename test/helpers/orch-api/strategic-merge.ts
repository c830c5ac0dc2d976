import { isDeepStrictEqual } from 'node:util';
import { badRequest } from './errors';
import { isObject } from './json-patch';

/*
 * Strategic merge patch (application/strategic-merge-patch+json) for built-in kinds, as
 * kubectl's client-side apply and `kubectl patch` send it: lists with a merge key (containers
 * by name, container ports by containerPort, service ports by port, volumeMounts by mountPath,
 * ...) merge item by item; other lists are replaced. Directives: `$patch: replace|delete`
 * (maps and list items), `$retainKeys`, `$deleteFromPrimitiveList/<f>`, `$setElementOrder/<f>`.
 * The merge keys are the Go types' patchMergeKey tags, told here by the field's path.
 */

/** How a list at a path merges: atomic (replaced), by a key, or as a set of primitives. */
export type ListStrategy = { readonly kind: 'atomic' } | { readonly kind: 'map'; readonly keys: readonly string[] } | { readonly kind: 'set' };

const ATOMIC: ListStrategy = { kind: 'atomic' };
const byKey = (...keys: string[]): ListStrategy => ({ kind: 'map', keys });
const CONTAINER_LISTS = ['containers', 'initContainers', 'ephemeralContainers'];

/** The list strategy of built-in kinds' fields; `path` is the field names from the root (no indexes). */
export function builtInListStrategy(path: readonly string[]): ListStrategy {
  const last = path[path.length - 1];
  const parent = path[path.length - 2];
  switch (last) {
    case 'containers':
    case 'initContainers':
    case 'ephemeralContainers':
    case 'volumes':
    case 'imagePullSecrets':
    case 'resourceClaims':
    case 'webhooks':
      return byKey('name');
    case 'env':
      return CONTAINER_LISTS.includes(parent) ? byKey('name') : ATOMIC;
    case 'ports':
      if (CONTAINER_LISTS.includes(parent)) return byKey('containerPort', 'protocol');
      if (parent === 'spec' && path.length === 2) return byKey('port', 'protocol');
      return ATOMIC;
    case 'volumeMounts':
      return byKey('mountPath');
    case 'volumeDevices':
      return byKey('devicePath');
    case 'conditions':
      return byKey('type');
    case 'ownerReferences':
      return byKey('uid');
    case 'hostAliases':
      return byKey('ip');
    case 'podIPs':
    case 'hostIPs':
      return byKey('ip');
    case 'topologySpreadConstraints':
      return byKey('topologyKey', 'whenUnsatisfiable');
    case 'finalizers':
      return parent === 'metadata' ? { kind: 'set' } : ATOMIC;
    default:
      return ATOMIC;
  }
}

/** The patch merge key (the first key: SMP merges by one key) of a keyed list. */
function mergeKey(strategy: ListStrategy): string | undefined {
  return strategy.kind === 'map' ? strategy.keys[0] : undefined;
}

export function strategicMergePatch(original: unknown, patch: unknown, strategyOf: (path: readonly string[]) => ListStrategy = builtInListStrategy): unknown {
  if (!isObject(patch)) throw badRequest('a strategic merge patch must be a JSON object');
  const merged = mergeMap(isObject(original) ? original : {}, patch, [], strategyOf);
  return merged ?? {};
}

function mergeMap(original: Record<string, unknown>, patch: Record<string, unknown>, path: string[], strategyOf: (path: readonly string[]) => ListStrategy): Record<string, unknown> | undefined {
  const directive = patch.$patch;
  if (directive === 'delete') return undefined;
  if (directive === 'replace') return strip(patch) as Record<string, unknown>;
  if (directive !== undefined) throw badRequest(`Unknown patch type: ${String(directive)}`);
  const out: Record<string, unknown> = { ...original };
  const orders: [string, unknown[]][] = [];
  for (const [key, value] of Object.entries(patch)) {
    if (key === '$patch' || key === '$retainKeys') continue;
    if (key.startsWith('$setElementOrder/')) {
      if (Array.isArray(value)) orders.push([key.slice('$setElementOrder/'.length), value]);
      continue;
    }
    if (key.startsWith('$deleteFromPrimitiveList/')) {
      const field = key.slice('$deleteFromPrimitiveList/'.length);
      const remove = Array.isArray(value) ? value : [];
      if (Array.isArray(out[field])) out[field] = (out[field] as unknown[]).filter((v) => !remove.some((r) => isDeepStrictEqual(r, v)));
      continue;
    }
    if (value === null) {
      delete out[key];
    } else if (isObject(value)) {
      const merged = mergeMap(isObject(out[key]) ? (out[key] as Record<string, unknown>) : {}, value, [...path, key], strategyOf);
      if (merged === undefined) delete out[key];
      else out[key] = merged;
    } else if (Array.isArray(value)) {
      out[key] = mergeList(Array.isArray(out[key]) ? (out[key] as unknown[]) : [], value, [...path, key], strategyOf);
    } else {
      out[key] = value;
    }
  }
  if (Array.isArray(patch.$retainKeys)) {
    const keep = new Set(patch.$retainKeys as string[]);
    for (const key of Object.keys(out)) if (!keep.has(key)) delete out[key];
  }
  for (const [field, order] of orders) {
    if (Array.isArray(out[field])) out[field] = reorder(out[field] as unknown[], order, mergeKey(strategyOf([...path, field])));
  }
  return out;
}

function mergeList(original: unknown[], patch: unknown[], path: string[], strategyOf: (path: readonly string[]) => ListStrategy): unknown[] {
  const strategy = strategyOf(path);
  if (patch.some((item) => isObject(item) && item.$patch === 'replace')) {
    return patch.filter((item) => !(isObject(item) && item.$patch === 'replace')).map(strip);
  }
  if (strategy.kind === 'atomic') return patch.map(strip);
  if (strategy.kind === 'set') {
    const out = [...original];
    for (const v of patch) if (!out.some((o) => isDeepStrictEqual(o, v))) out.push(v);
    return out;
  }
  const key = mergeKey(strategy) as string;
  const out = [...original];
  for (const item of patch) {
    if (!isObject(item)) throw badRequest(`unable to find api field in struct for the merge key "${key}": list items must be objects`);
    const index = out.findIndex((o) => isObject(o) && o[key] === item[key]);
    if (item.$patch === 'delete') {
      if (index >= 0) out.splice(index, 1);
      continue;
    }
    if (index >= 0) {
      const merged = mergeMap(out[index] as Record<string, unknown>, item, path, strategyOf);
      if (merged === undefined) out.splice(index, 1);
      else out[index] = merged;
    } else {
      out.push(strip(item));
    }
  }
  return out;
}

/** Orders a keyed (or primitive) list as `$setElementOrder` says; items it does not name keep their place after. */
function reorder(list: unknown[], order: unknown[], key: string | undefined): unknown[] {
  const id = (v: unknown) => (key !== undefined && isObject(v) ? v[key] : v);
  const wanted = order.map(id);
  const ranked = list.map((item, i) => ({ item, i, rank: wanted.findIndex((w) => isDeepStrictEqual(w, id(item))) }));
  ranked.sort((a, b) => (a.rank < 0 ? Infinity : a.rank) - (b.rank < 0 ? Infinity : b.rank) || a.i - b.i);
  return ranked.map((r) => r.item);
}

/** A patch value with its directives removed, as it is stored when nothing was there to merge with. */
function strip(value: unknown): unknown {
  if (Array.isArray(value)) return value.filter((v) => !(isObject(v) && v.$patch === 'delete')).map(strip);
  if (!isObject(value)) return value;
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(value)) {
    if (k.startsWith('$')) continue;
    if (v === null) continue;
    out[k] = strip(v);
  }
  return out;
}
