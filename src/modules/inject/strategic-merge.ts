/**
 * The orchestrator's strategic merge patch over a Pod, as the incumbent applies its rendered
 * template: maps merge key by key (a null deletes), lists with a merge key (containers by
 * name, env by name, volume mounts by mount path...) merge item by item keeping the patch's
 * order with the original's other items interleaved, and other lists are replaced.
 */

type Json = unknown;
type JsonMap = Record<string, Json>;

export interface PatchSchema {
  fields?: Record<string, PatchSchema>;
  /** For a list: how it merges, and the schema of its items. */
  mergeKey?: string;
  merge?: boolean;
  items?: PatchSchema;
}

const byName = (items?: PatchSchema): PatchSchema => ({ merge: true, mergeKey: 'name', items });

const CONTAINER: PatchSchema = {
  fields: {
    ports: { merge: true, mergeKey: 'containerPort' },
    env: byName(),
    volumeMounts: { merge: true, mergeKey: 'mountPath' },
    volumeDevices: { merge: true, mergeKey: 'devicePath' },
  },
};

export const POD_SCHEMA: PatchSchema = {
  fields: {
    metadata: { fields: { finalizers: { merge: true }, ownerReferences: { merge: true, mergeKey: 'uid' } } },
    spec: {
      fields: {
        volumes: byName(),
        initContainers: byName(CONTAINER),
        containers: byName(CONTAINER),
        ephemeralContainers: byName(CONTAINER),
        imagePullSecrets: byName(),
        hostAliases: { merge: true, mergeKey: 'ip' },
        topologySpreadConstraints: { merge: true, mergeKey: 'topologyKey' },
        resourceClaims: byName(),
        schedulingGates: byName(),
      },
    },
  },
};

export class MergeError extends Error {}

const isMap = (v: Json): v is JsonMap => typeof v === 'object' && v !== null && !Array.isArray(v);

/** Applies `patch` over `original` (neither is modified); the result as plain JSON. */
export function strategicMerge(original: JsonMap, patch: JsonMap, schema: PatchSchema = POD_SCHEMA): JsonMap {
  return mergeMap(structuredClone(original), structuredClone(patch), schema);
}

function mergeMap(original: JsonMap, patch: JsonMap, schema: PatchSchema | undefined): JsonMap {
  const directive = patch['$patch'];
  if (directive === 'replace') {
    delete patch['$patch'];
    return patch;
  }
  if (directive === 'delete') return {};
  for (const [k, patchV] of Object.entries(patch)) {
    if (k.startsWith('$')) continue;
    if (patchV === null) {
      delete original[k];
      continue;
    }
    if (!(k in original) || original[k] === null || kindOf(original[k]) !== kindOf(patchV)) {
      original[k] = discardNulls(patchV);
      continue;
    }
    const sub = schema?.fields?.[k];
    if (isMap(patchV)) original[k] = mergeMap(original[k] as JsonMap, patchV, sub);
    else if (Array.isArray(patchV)) original[k] = sub?.merge ? mergeSlice(original[k] as Json[], patchV, sub) : patchV;
    else original[k] = patchV;
  }
  return original;
}

function kindOf(v: Json): string {
  return Array.isArray(v) ? 'array' : v === null ? 'null' : typeof v;
}

function discardNulls(v: Json): Json {
  if (isMap(v)) {
    for (const [k, e] of Object.entries(v)) {
      if (e === null) delete v[k];
      else discardNulls(e);
    }
  } else if (Array.isArray(v)) v.forEach(discardNulls);
  return v;
}

function mergeSlice(original: Json[], patch: Json[], schema: PatchSchema): Json[] {
  if (original.length === 0 && patch.length === 0) return original;
  const key = schema.mergeKey;
  const sample = original[0] ?? patch[0];
  if (!isMap(sample)) {
    // Scalars: the union, without duplicates.
    const merged: Json[] = [];
    for (const v of [...original, ...patch]) if (!merged.some((m) => m === v)) merged.push(v);
    const inPatch = (v: Json) => patch.some((p) => p === v);
    return order(merged.filter(inPatch), merged.filter((v) => !inPatch(v)), original, (a, b) => a === b);
  }
  if (!key) throw new MergeError('cannot merge lists without a merge key');
  const keyOf = (item: Json, where: string): Json => {
    if (!isMap(item) || !(key in item)) throw new MergeError(`map: ${JSON.stringify(item)} does not contain declared merge key: ${key} (${where})`);
    return item[key];
  };
  let merged = [...original];
  // Items the patch deletes.
  for (const item of patch) {
    if (isMap(item) && item['$patch'] === 'delete') {
      const k = keyOf(item, 'patch');
      merged = merged.filter((m) => !(isMap(m) && m[key] === k));
    }
  }
  const patchItems = patch.filter((item) => !(isMap(item) && item['$patch'] === 'delete'));
  for (const item of patchItems) {
    const k = keyOf(item, 'patch');
    const at = merged.findIndex((m) => isMap(m) && m[key] === k);
    if (at >= 0) merged[at] = mergeMap(merged[at] as JsonMap, item as JsonMap, schema.items);
    else merged.push(item);
  }
  const patchKeys = patchItems.map((item) => (item as JsonMap)[key]);
  const inPatch = (v: Json) => isMap(v) && patchKeys.includes(v[key]);
  const same = (a: Json, b: Json) => isMap(a) && isMap(b) && a[key] === b[key];
  const fromPatch = merged.filter(inPatch);
  fromPatch.sort((a, b) => patchKeys.indexOf((a as JsonMap)[key]) - patchKeys.indexOf((b as JsonMap)[key]));
  return order(fromPatch, merged.filter((v) => !inPatch(v)), original, same);
}

/**
 * The order the orchestrator gives a merged list: the patch's items in patch order, and the
 * original's other items inserted among them where the original order puts them.
 */
function order(patchItems: Json[], serverOnly: Json[], serverOrder: Json[], same: (a: Json, b: Json) => boolean): Json[] {
  const indexIn = (v: Json) => serverOrder.findIndex((s) => same(s, v));
  const out: Json[] = [];
  let i = 0;
  let j = 0;
  while (i < serverOnly.length || j < patchItems.length) {
    if (i >= serverOnly.length) out.push(patchItems[j++]);
    else if (j >= patchItems.length) out.push(serverOnly[i++]);
    else {
      const li = indexIn(serverOnly[i]);
      const ri = indexIn(patchItems[j]);
      if (li >= 0 && ri >= 0 && li < ri) out.push(serverOnly[i++]);
      else out.push(patchItems[j++]);
    }
  }
  return out;
}

/** Drops null values everywhere, as a round trip through the orchestrator's typed objects does. */
export function dropNulls<T>(v: T): T {
  if (Array.isArray(v)) return v.filter((e) => e !== null).map(dropNulls) as T;
  if (isMap(v)) {
    const out: JsonMap = {};
    for (const [k, e] of Object.entries(v)) if (e !== null && e !== undefined) out[k] = dropNulls(e);
    return out as T;
  }
  return v;
}
