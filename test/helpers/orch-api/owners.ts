import type { Obj, Store } from './store';

/*
 * Which objects name which owner (metadata.ownerReferences[].uid), kept up to date from the
 * store's changes, so cascading deletion finds dependents without scanning every object.
 */

export interface ObjectRef {
  readonly key: string;
  readonly namespace: string;
  readonly name: string;
}

export class OwnerIndex {
  private readonly dependents = new Map<string, Map<string, ObjectRef>>();

  constructor(store: Store) {
    store.onChange((event) => {
      const ref = refOf(event.key, event.object);
      if (event.previous) for (const uid of ownerUids(event.previous)) this.dependents.get(uid)?.delete(id(ref));
      if (event.type !== 'DELETED') {
        for (const uid of ownerUids(event.object)) {
          let set = this.dependents.get(uid);
          if (!set) this.dependents.set(uid, (set = new Map()));
          set.set(id(ref), ref);
        }
      }
      if (event.type === 'DELETED') for (const uid of ownerUids(event.object)) this.dependents.get(uid)?.delete(id(ref));
    });
  }

  of(uid: string): ObjectRef[] {
    return [...(this.dependents.get(uid)?.values() ?? [])];
  }
}

function refOf(key: string, obj: Obj): ObjectRef {
  return { key, namespace: obj.metadata.namespace ?? '', name: obj.metadata.name };
}

function id(ref: ObjectRef): string {
  return `${ref.key}|${ref.namespace}|${ref.name}`;
}

function ownerUids(obj: Obj): string[] {
  const refs = obj.metadata?.ownerReferences;
  return Array.isArray(refs) ? refs.map((r: Obj) => r.uid).filter((u: unknown): u is string => typeof u === 'string') : [];
}
