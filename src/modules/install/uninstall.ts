/*
 * Removing the mesh: the objects carrying the install's labels (see render.ts). A revision's
 * objects are those with `mesh.io/rev=<revision>`; `--purge` takes everything labelled
 * `app.kubernetes.io/part-of=mesh`, every revision plus the shared CRDs and namespaces.
 * Deleted in the reverse of the apply order: webhooks first (so nothing is admitted by a
 * daemon going away), CRDs and namespaces last.
 */
import type * as k8s from '@kubernetes/client-node';
import { orchLibrary } from '../orch';
import { apiErrorMessage, OrchClient, statusCodeOf } from '../orch';
import { UserError } from '../shared/user-error';
import { ManifestObject, objectRef, PART_OF_LABEL, PART_OF_VALUE, REVISION_LABEL } from './render';

/** Every kind the renderer makes, in delete order. */
const KINDS: { apiVersion: string; kind: string }[] = [
  { apiVersion: 'admissionregistration.k8s.io/v1', kind: 'ValidatingWebhookConfiguration' },
  { apiVersion: 'admissionregistration.k8s.io/v1', kind: 'MutatingWebhookConfiguration' },
  { apiVersion: 'apps/v1', kind: 'DaemonSet' },
  { apiVersion: 'apps/v1', kind: 'Deployment' },
  { apiVersion: 'v1', kind: 'Service' },
  { apiVersion: 'v1', kind: 'ConfigMap' },
  { apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'RoleBinding' },
  { apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'Role' },
  { apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'ClusterRoleBinding' },
  { apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'ClusterRole' },
  { apiVersion: 'v1', kind: 'ServiceAccount' },
  { apiVersion: 'apiextensions.k8s.io/v1', kind: 'CustomResourceDefinition' },
  { apiVersion: 'v1', kind: 'Namespace' },
];

export interface UninstallScope {
  /** `--revision` (empty: the default revision). */
  revision: string;
  purge: boolean;
}

export function uninstallSelector(scope: UninstallScope): string {
  return scope.purge ? `${PART_OF_LABEL}=${PART_OF_VALUE}` : `${PART_OF_LABEL}=${PART_OF_VALUE},${REVISION_LABEL}=${scope.revision || 'default'}`;
}

/** The mesh's objects in the cluster that the uninstall would delete, in delete order. */
export async function findInstalled(client: OrchClient, scope: UninstallScope): Promise<ManifestObject[]> {
  const api = client.api(orchLibrary().KubernetesObjectApi);
  const selector = uninstallSelector(scope);
  const found: ManifestObject[] = [];
  for (const { apiVersion, kind } of KINDS) {
    let list: k8s.KubernetesListObject<k8s.KubernetesObject>;
    try {
      list = await api.list(apiVersion, kind, undefined, undefined, undefined, undefined, undefined, selector);
    } catch (err) {
      if (statusCodeOf(err) === 404) continue;
      throw new UserError(`cannot list ${kind} objects with ${selector}: ${apiErrorMessage(err)}`);
    }
    const items = list.items.map((i) => ({ apiVersion, kind, metadata: { name: i.metadata!.name!, namespace: i.metadata?.namespace } }) as ManifestObject);
    items.sort((a, b) => objectRef(a).localeCompare(objectRef(b)));
    found.push(...items);
  }
  return found;
}

/** Deletes `objects` (foreground, so a Deployment's pods go with it); one already gone is fine. */
export async function deleteObjects(client: OrchClient, objects: ManifestObject[], onDeleted: (obj: ManifestObject) => void): Promise<void> {
  const api = client.api(orchLibrary().KubernetesObjectApi);
  for (const obj of objects) {
    try {
      await api.delete({ apiVersion: obj.apiVersion, kind: obj.kind, metadata: { name: obj.metadata.name, namespace: obj.metadata.namespace } }, undefined, undefined, undefined, undefined, 'Background');
    } catch (err) {
      if (statusCodeOf(err) === 404) continue;
      throw new UserError(`cannot delete ${objectRef(obj)}: ${apiErrorMessage(err)}`);
    }
    onDeleted(obj);
  }
}
