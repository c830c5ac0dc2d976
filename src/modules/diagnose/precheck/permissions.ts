/**
 * Whether the user may create what an install creates, asked the orchestrator's way (a
 * SelfSubjectAccessReview per resource): the incumbent's list, with the system namespace
 * for the namespaced ones.
 */
import type { AuthorizationV1Api } from '@kubernetes/client-node';
import { orchLibrary } from '../../orch';
import { describeApiError } from '../../leader-election';
import { OrchClient } from '../../orch';
import { INSUFFICIENT_PERMISSIONS } from '../messages/catalogue';
import { Message, message } from '../messages/message';

interface Needed {
  group: string;
  resource: string;
  /** Namespaced in the system namespace; cluster-scoped otherwise. */
  inMeshNamespace?: boolean;
}

const NEEDED: readonly Needed[] = [
  { group: '', resource: 'namespaces' },
  { group: 'rbac.authorization.k8s.io', resource: 'clusterroles' },
  { group: 'rbac.authorization.k8s.io', resource: 'clusterrolebindings' },
  { group: 'apiextensions.k8s.io', resource: 'customresourcedefinitions' },
  { group: 'rbac.authorization.k8s.io', resource: 'roles', inMeshNamespace: true },
  { group: '', resource: 'serviceaccounts', inMeshNamespace: true },
  { group: '', resource: 'services', inMeshNamespace: true },
  { group: 'apps', resource: 'deployments', inMeshNamespace: true },
  { group: '', resource: 'configmaps', inMeshNamespace: true },
  { group: 'admissionregistration.k8s.io', resource: 'mutatingwebhookconfigurations' },
  { group: 'admissionregistration.k8s.io', resource: 'validatingwebhookconfigurations' },
];

/** Why `create` on the resource is not allowed, or undefined when it is. */
async function cannotCreate(api: AuthorizationV1Api, needed: Needed, meshNamespace: string): Promise<string | undefined> {
  try {
    const review = await api.createSelfSubjectAccessReview({
      body: {
        apiVersion: 'authorization.k8s.io/v1',
        kind: 'SelfSubjectAccessReview',
        spec: { resourceAttributes: { verb: 'create', group: needed.group, version: 'v1', resource: needed.resource, ...(needed.inMeshNamespace ? { namespace: meshNamespace } : {}) } },
      },
    });
    if (review.status?.allowed) return undefined;
    return review.status?.reason || 'permission denied';
  } catch (err) {
    return describeApiError(err);
  }
}

export async function checkInstallPermissions(client: OrchClient, meshNamespace: string): Promise<Message[]> {
  const api = client.api(orchLibrary().AuthorizationV1Api);
  const answers = await Promise.all(NEEDED.map((n) => cannotCreate(api, n, meshNamespace)));
  return NEEDED.flatMap((n, i) => (answers[i] === undefined ? [] : [message(INSUFFICIENT_PERMISSIONS, 'Cluster', n.resource, answers[i])]));
}
