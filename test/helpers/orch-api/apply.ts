import { isDeepStrictEqual } from 'node:util';
import { ApiError } from './errors';
import { isObject } from './json-patch';
import type { ListStrategy } from './strategic-merge';

/*
 * Server-side apply (application/apply-patch+yaml): the applied configuration is merged into
 * the live object (keyed lists item by item, atomic lists replaced), fields the same manager
 * applied before and leaves out now are removed (unless another manager owns them), and the
 * manager's field set is recorded in metadata.managedFields in the real FieldsV1 format
 * (`f:<field>`, `k:{<keys>}`, `v:<value>`). Changing a field another applier owns with a
 * different value is a 409 conflict unless `force` is set, which takes the field over.
 */

export type FieldsV1 = { [key: string]: FieldsV1 };
type Strategy = (path: readonly string[]) => ListStrategy;
// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Obj = Record<string, any>;

export interface ManagedFieldsEntry {
  manager: string;
  operation: 'Apply' | 'Update';
  apiVersion: string;
  time: string;
  fieldsType: 'FieldsV1';
  fieldsV1: FieldsV1;
  subresource?: string;
}

const METADATA_FIELDS = ['labels', 'annotations', 'finalizers', 'ownerReferences'];

/** The FieldsV1 set of everything an applied configuration names. */
export function fieldSetOf(applied: Obj, strategyOf: Strategy): FieldsV1 {
  const out: FieldsV1 = {};
  for (const [key, value] of Object.entries(applied)) {
    if (key === 'apiVersion' || key === 'kind') continue;
    if (key === 'metadata') {
      if (!isObject(value)) continue;
      const meta: FieldsV1 = {};
      for (const field of METADATA_FIELDS) if (value[field] !== undefined) meta[`f:${field}`] = valueSet(value[field], ['metadata', field], strategyOf);
      if (Object.keys(meta).length > 0) out['f:metadata'] = meta;
      continue;
    }
    out[`f:${key}`] = valueSet(value, [key], strategyOf);
  }
  return out;
}

function valueSet(value: unknown, path: string[], strategyOf: Strategy): FieldsV1 {
  if (isObject(value)) {
    const out: FieldsV1 = {};
    for (const [k, v] of Object.entries(value)) out[`f:${k}`] = valueSet(v, [...path, k], strategyOf);
    if (Object.keys(out).length > 0) out['.'] = {};
    return out;
  }
  if (Array.isArray(value)) {
    const strategy = strategyOf(path);
    if (strategy.kind === 'map') {
      const out: FieldsV1 = {};
      for (const item of value) {
        if (!isObject(item)) continue;
        const item_ = valueSet(item, path, strategyOf);
        item_['.'] = {};
        out[`k:${itemKey(item, strategy.keys)}`] = item_;
      }
      return out;
    }
    if (strategy.kind === 'set') {
      const out: FieldsV1 = {};
      for (const item of value) out[`v:${JSON.stringify(item)}`] = {};
      return out;
    }
  }
  return {};
}

function itemKey(item: Record<string, unknown>, keys: readonly string[]): string {
  const out: Record<string, unknown> = {};
  for (const k of [...keys].sort()) if (item[k] !== undefined) out[k] = item[k];
  return JSON.stringify(out);
}

/** Leaf paths of a set with the value each has in `obj` (undefined where obj lacks it). */
function leaves(set: FieldsV1, obj: unknown, prefix: string[] = [], out = new Map<string, { path: string[]; value: unknown }>()): Map<string, { path: string[]; value: unknown }> {
  for (const [key, child] of Object.entries(set)) {
    if (key === '.') continue;
    const path = [...prefix, key];
    const value = step(obj, key);
    const grandchildren = Object.keys(child).filter((k) => k !== '.');
    if (grandchildren.length === 0) out.set(path.join('\u0000'), { path, value });
    else leaves(child, value, path, out);
  }
  return out;
}

function step(obj: unknown, key: string): unknown {
  if (key.startsWith('f:')) return isObject(obj) ? obj[key.slice(2)] : undefined;
  if (!Array.isArray(obj)) return undefined;
  if (key.startsWith('k:')) {
    const wanted = JSON.parse(key.slice(2)) as Record<string, unknown>;
    return obj.find((item) => isObject(item) && Object.entries(wanted).every(([k, v]) => isDeepStrictEqual(item[k], v)));
  }
  if (key.startsWith('v:')) {
    const wanted = JSON.parse(key.slice(2));
    return obj.find((item) => isDeepStrictEqual(item, wanted));
  }
  return undefined;
}

/** `.spec.containers[name="app"].image`, as the real server prints a field path. */
function describePath(path: string[]): string {
  return path
    .map((key) => {
      if (key.startsWith('f:')) return `.${key.slice(2)}`;
      if (key.startsWith('k:')) {
        const keys = JSON.parse(key.slice(2)) as Record<string, unknown>;
        return `[${Object.entries(keys)
          .map(([k, v]) => `${k}=${JSON.stringify(v)}`)
          .join(',')}]`;
      }
      if (key.startsWith('v:')) return `[=${key.slice(2)}]`;
      return key;
    })
    .join('');
}

function removePath(obj: unknown, path: string[]): void {
  if (path.length === 0) return;
  const [key, ...rest] = path;
  if (rest.length > 0) {
    removePath(step(obj, key), rest);
    return;
  }
  if (key.startsWith('f:') && isObject(obj)) delete obj[key.slice(2)];
  else if (Array.isArray(obj)) {
    const target = step(obj, key);
    const i = obj.indexOf(target);
    if (i >= 0) obj.splice(i, 1);
  }
}

function removeFromSet(set: FieldsV1, path: string[]): void {
  const [key, ...rest] = path;
  if (!(key in set)) return;
  if (rest.length === 0) delete set[key];
  else {
    removeFromSet(set[key], rest);
    if (Object.keys(set[key]).filter((k) => k !== '.').length === 0) delete set[key];
  }
}

/** Merges the applied configuration into the live value: maps by field, keyed lists by item, others replaced. */
function merge(live: unknown, applied: unknown, path: string[], strategyOf: Strategy): unknown {
  if (isObject(applied)) {
    const out: Record<string, unknown> = isObject(live) ? { ...live } : {};
    for (const [k, v] of Object.entries(applied)) {
      if (v === null) delete out[k];
      else out[k] = merge(out[k], v, [...path, k], strategyOf);
    }
    return out;
  }
  if (Array.isArray(applied)) {
    const strategy = strategyOf(path);
    if (strategy.kind === 'atomic' || !Array.isArray(live)) return structuredClone(applied);
    const out = [...live];
    for (const item of applied) {
      const index =
        strategy.kind === 'set'
          ? out.findIndex((o) => isDeepStrictEqual(o, item))
          : out.findIndex((o) => isObject(o) && isObject(item) && strategy.keys.every((k) => isDeepStrictEqual(o[k], item[k])));
      if (index < 0) out.push(structuredClone(item));
      else out[index] = merge(out[index], item, path, strategyOf);
    }
    return out;
  }
  return applied;
}

export interface ApplyResult {
  readonly object: Obj;
  readonly managedFields: ManagedFieldsEntry[];
}

/** Applies `applied` (for `manager`) to `live` (undefined: the object is created from it). */
export function serverSideApply(live: Obj | undefined, applied: Obj, manager: string, force: boolean, apiVersion: string, strategyOf: Strategy, qualified: { group: string; plural: string; name: string }): ApplyResult {
  const entries: ManagedFieldsEntry[] = structuredClone((live?.metadata?.managedFields as ManagedFieldsEntry[] | undefined) ?? []);
  const newSet = fieldSetOf(applied, strategyOf);
  const mine = entries.find((e) => e.manager === manager && e.operation === 'Apply' && !e.subresource);
  const previousSet: FieldsV1 = mine?.fieldsV1 ?? {};
  const appliedLeaves = leaves(newSet, applied);

  if (live) {
    const conflicts: { manager: string; apiVersion: string; path: string[] }[] = [];
    for (const other of entries) {
      if (other === mine || other.subresource) continue;
      for (const [key, owned] of leaves(other.fieldsV1, live)) {
        const wanted = appliedLeaves.get(key);
        if (wanted && !isDeepStrictEqual(wanted.value, owned.value)) conflicts.push({ manager: other.manager, apiVersion: other.apiVersion, path: owned.path });
      }
    }
    if (conflicts.length > 0 && !force) throw conflictError(conflicts, qualified);
    for (const c of conflicts) {
      const owner = entries.find((e) => e.manager === c.manager);
      if (owner) removeFromSet(owner.fieldsV1, c.path);
    }
  }

  const object: Obj = live ? structuredClone(live) : {};
  // Fields this manager applied before and no longer names go, unless someone else owns them too.
  const stillOwned = new Set<string>();
  for (const e of entries) if (e !== mine) for (const key of leaves(e.fieldsV1, undefined).keys()) stillOwned.add(key);
  for (const [key, { path }] of leaves(previousSet, undefined)) {
    if (!appliedLeaves.has(key) && !stillOwned.has(key) && !isPrefixOfAny(key, appliedLeaves)) removePath(object, path);
  }
  const merged = merge(object, { ...applied, metadata: { ...(applied.metadata ?? {}) } }, [], strategyOf) as Obj;

  const entry: ManagedFieldsEntry = { manager, operation: 'Apply', apiVersion, time: new Date().toISOString().replace(/\.\d+Z$/, 'Z'), fieldsType: 'FieldsV1', fieldsV1: newSet };
  // In place, so an apply that changes nothing leaves the entries as they were (see replace).
  const next = entries.map((e) => (e === mine ? entry : e)).filter((e) => Object.keys(e.fieldsV1).length > 0);
  if (!mine) next.push(entry);
  return { object: merged, managedFields: next };
}

function isPrefixOfAny(key: string, set: Map<string, unknown>): boolean {
  for (const k of set.keys()) if (k.startsWith(key + '\u0000')) return true;
  return false;
}

function conflictError(conflicts: { manager: string; apiVersion: string; path: string[] }[], q: { group: string; plural: string; name: string }): ApiError {
  const byManager = new Map<string, { apiVersion: string; paths: string[] }>();
  for (const c of conflicts) {
    const m = byManager.get(c.manager) ?? { apiVersion: c.apiVersion, paths: [] };
    m.paths.push(describePath(c.path));
    byManager.set(c.manager, m);
  }
  let message: string;
  if (conflicts.length === 1) {
    const [manager, m] = [...byManager][0];
    message = `Apply failed with 1 conflict: conflict with "${manager}" using ${m.apiVersion}: ${m.paths[0]}`;
  } else {
    const parts = [...byManager].map(([manager, m]) => `conflicts with "${manager}" using ${m.apiVersion}:\n${m.paths.map((p) => `- ${p}`).join('\n')}`);
    message = `Apply failed with ${conflicts.length} conflicts: ${parts.join('\n')}`;
  }
  const causes = conflicts.map((c) => ({ reason: 'FieldManagerConflict', message: `conflict with "${c.manager}" using ${c.apiVersion}`, field: describePath(c.path) }));
  return new ApiError(409, 'Conflict', message, { name: q.name, group: q.group || undefined, kind: q.plural, causes });
}
