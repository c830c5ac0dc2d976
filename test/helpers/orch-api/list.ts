import { ApiError, badRequest, gone, tooOldResourceVersion } from './errors';
import { type ResourceType, resourceKey } from './resources';
import { type Selection, selects, selectsAll } from './selectors';
import type { Obj, Store } from './store';

/*
 * Lists as the real server answers them: sorted by namespace and name, `limit` with an opaque
 * `continue` token (410 once the version it was made at is forgotten), remainingItemCount
 * when there is no selector, and the resourceVersion semantics: unset or "0" the current
 * state, resourceVersionMatch=Exact a snapshot at that version (rebuilt from the history),
 * a version from the future 504 "Too large resource version".
 */

export interface ListRequest {
  readonly type: ResourceType;
  readonly namespace?: string;
  readonly selection: Selection;
  readonly limit?: number;
  readonly continueToken?: string;
  readonly resourceVersion?: string;
  readonly resourceVersionMatch?: string;
}

export interface ListResult {
  readonly items: Obj[];
  readonly resourceVersion: number;
  readonly continueToken?: string;
  readonly remainingItemCount?: number;
}

interface Token {
  rv: number;
  start: string;
}

export function listObjects(store: Store, req: ListRequest): ListResult {
  const key = resourceKey(req.type.group, req.type.plural);
  let atRv = store.resourceVersion;
  let items: Obj[];
  let after: string | undefined;
  if (req.continueToken) {
    const token = decodeToken(req.continueToken);
    if (token.rv < store.compactedRevision) {
      throw gone('The provided continue parameter is too old to display a consistent list result. You can start a new list without the continue parameter, or use the continue token in this response to retrieve the remainder of the results. Continuing with the provided token results in an inconsistent list - objects that were created, modified, or deleted between the time the first chunk was returned and now may show up in the list.');
    }
    atRv = token.rv;
    after = token.start;
    items = snapshot(store, key, req.namespace, token.rv);
  } else {
    const rv = req.resourceVersion ?? '';
    const match = req.resourceVersionMatch ?? '';
    if (match && !['Exact', 'NotOlderThan'].includes(match)) throw badRequest(`resourceVersionMatch: Unsupported value: "${match}": supported values: "Exact", "NotOlderThan"`);
    if (match && rv === '') throw badRequest('resourceVersionMatch is forbidden unless resourceVersion is provided');
    if (rv !== '' && !/^\d+$/.test(rv)) throw badRequest(`invalid resource version "${rv}"`);
    if (rv !== '' && Number(rv) > store.resourceVersion) {
      throw new ApiError(504, 'Timeout', `Too large resource version: ${rv}, current: ${store.resourceVersion}`, { causes: [{ reason: 'ResourceVersionTooLarge', message: 'Too large resource version' }], retryAfterSeconds: 1 });
    }
    if (match === 'Exact') {
      if (Number(rv) < store.compactedRevision) throw tooOldResourceVersion(rv, store.compactedRevision);
      atRv = Number(rv);
      items = snapshot(store, key, req.namespace, atRv);
    } else {
      items = store.items(key, req.namespace);
    }
  }
  if (after !== undefined) {
    const start = after;
    items = items.filter((o) => objectKey(o) > start);
  }
  if (!selectsAll(req.selection)) items = items.filter((o) => selects(req.selection, o));
  const limit = req.limit && req.limit > 0 ? req.limit : undefined;
  if (limit === undefined || items.length <= limit) return { items, resourceVersion: atRv };
  const page = items.slice(0, limit);
  const continueToken = encodeToken({ rv: atRv, start: objectKey(page[page.length - 1]) });
  return { items: page, resourceVersion: atRv, continueToken, remainingItemCount: selectsAll(req.selection) ? items.length - limit : undefined };
}

/** Sorts as (namespace, name): NUL is below every character a name may have. */
function objectKey(obj: Obj): string {
  return `${obj.metadata.namespace ?? ''}\u0000${obj.metadata.name}`;
}

/** The objects as they were at `rv`: the current ones with the later changes undone. */
function snapshot(store: Store, key: string, namespace: string | undefined, rv: number): Obj[] {
  const current = store.items(key, namespace);
  if (rv >= store.resourceVersion) return current;
  const later = store.eventsSince(rv);
  if (!later) throw tooOldResourceVersion(String(rv), store.compactedRevision);
  const byKey = new Map(current.map((o) => [objectKey(o), o]));
  for (let i = later.length - 1; i >= 0; i--) {
    const e = later[i];
    if (e.key !== key) continue;
    if (namespace !== undefined && (e.object.metadata.namespace ?? '') !== namespace) continue;
    const k = objectKey(e.object);
    if (e.type === 'ADDED') byKey.delete(k);
    else if (e.previous) byKey.set(k, e.previous);
  }
  return [...byKey.entries()].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)).map(([, o]) => o);
}

function encodeToken(token: Token): string {
  return Buffer.from(JSON.stringify({ v: 'meta.k8s.io/v1', rv: token.rv, start: token.start })).toString('base64url');
}

function decodeToken(text: string): Token {
  try {
    const parsed = JSON.parse(Buffer.from(text, 'base64url').toString('utf8'));
    if (typeof parsed.rv === 'number' && typeof parsed.start === 'string') return { rv: parsed.rv, start: parsed.start };
  } catch {
    // answered below
  }
  throw badRequest('continue key is not valid: incorrect encoded start resourceVersion (version meta.k8s.io/v1)');
}
