import type { Operations } from '../operations';
import type { ResourceRegistry, ResourceType } from '../resources';
import type { Obj, Store } from '../store';

/** What every simulated controller works with: the store to read, the operations to write through. */
export interface ControllerContext {
  readonly store: Store;
  readonly registry: ResourceRegistry;
  readonly ops: Operations;
}

export function typeOf(ctx: ControllerContext, apiVersion: string, kind: string): ResourceType {
  const type = ctx.registry.byKind(apiVersion, kind);
  if (!type) throw new Error(`no type ${apiVersion} ${kind}`);
  return type;
}

/** Writes an object's status through the status subresource (no admission, as controllers' status writes rarely meet webhooks). */
export async function writeStatus(ctx: ControllerContext, type: ResourceType, obj: Obj, status: Obj): Promise<Obj> {
  if (JSON.stringify(obj.status ?? {}) === JSON.stringify(status)) return obj;
  const version = type.versions[0];
  return ctx.ops.update(type, version, obj.metadata.namespace, obj.metadata.name, { ...obj, status }, { admission: false }, type.subresources.includes('status') ? 'status' : undefined);
}

export function ownerRef(owner: Obj, kind: string, apiVersion: string): Obj {
  return { apiVersion, kind, name: owner.metadata.name, uid: owner.metadata.uid, controller: true, blockOwnerDeletion: true };
}

export function controllerOf(obj: Obj): Obj | undefined {
  return (obj.metadata?.ownerReferences ?? []).find((r: Obj) => r.controller);
}
