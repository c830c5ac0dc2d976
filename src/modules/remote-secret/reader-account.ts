/**
 * The service account a remote secret authenticates as, its permissions and its token.
 * `--create-service-account` creates the account and a ClusterRole (bound to it) allowing what
 * the daemon's registry reads of a remote cluster; the token is the account's legacy token
 * Secret when it has one, otherwise a TokenRequest.
 */
import type * as k8s from '@kubernetes/client-node';
import { orchLibrary } from '../orch';
import { apiErrorMessage, OrchClient, statusCodeOf } from '../orch';
import { UserError } from '../shared/user-error';

/** What the daemon's registry watches of a remote cluster, read-only. */
export const READER_RULES: k8s.V1PolicyRule[] = [
  { apiGroups: [''], resources: ['services', 'pods', 'nodes', 'namespaces', 'endpoints', 'secrets', 'configmaps'], verbs: ['get', 'list', 'watch'] },
  { apiGroups: ['discovery.k8s.io'], resources: ['endpointslices'], verbs: ['get', 'list', 'watch'] },
  { apiGroups: ['networking.mesh.io', 'security.mesh.io'], resources: ['*'], verbs: ['get', 'list', 'watch'] },
];

/** Lifetime asked of a TokenRequest: the secret is meant to last; the API server may shorten it. */
export const REMOTE_TOKEN_SECONDS = 365 * 24 * 3600;

/** The ClusterRole (and its binding) of the readers of namespace `ns`. */
export function readerRoleName(ns: string): string {
  return `mesh-reader-clusterrole-${ns}`;
}

/** Creates what is missing of the service account, its ClusterRole and binding; existing objects are left as they are. */
export async function ensureReaderAccount(client: OrchClient, namespace: string, serviceAccount: string, rules: k8s.V1PolicyRule[] = READER_RULES): Promise<void> {
  const core = client.api(orchLibrary().CoreV1Api);
  const rbac = client.api(orchLibrary().RbacAuthorizationV1Api);
  const role = readerRoleName(namespace);
  await createIfMissing(`ServiceAccount ${namespace}/${serviceAccount}`, () =>
    core.createNamespacedServiceAccount({ namespace, body: { apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name: serviceAccount, namespace } } }),
  );
  await createIfMissing(`ClusterRole ${role}`, () =>
    rbac.createClusterRole({ body: { apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'ClusterRole', metadata: { name: role, labels: { app: 'mesh-reader' } }, rules } }),
  );
  const binding = `${role}-${serviceAccount}`;
  await createIfMissing(`ClusterRoleBinding ${binding}`, () =>
    rbac.createClusterRoleBinding({
      body: {
        apiVersion: 'rbac.authorization.k8s.io/v1',
        kind: 'ClusterRoleBinding',
        metadata: { name: binding, labels: { app: 'mesh-reader' } },
        roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: role },
        subjects: [{ kind: 'ServiceAccount', name: serviceAccount, namespace }],
      },
    }),
  );
}

async function createIfMissing(what: string, create: () => Promise<unknown>): Promise<void> {
  try {
    await create();
  } catch (err) {
    if (statusCodeOf(err) === 409) return;
    throw new UserError(`cannot create ${what}: ${apiErrorMessage(err)}`);
  }
}

/**
 * A bearer token of `serviceAccount`: the token of a legacy token Secret of the account when
 * there is one (it does not expire), otherwise one from the TokenRequest API.
 * @throws UserError naming the account when it does not exist or no token can be had.
 */
export async function serviceAccountToken(client: OrchClient, namespace: string, serviceAccount: string): Promise<string> {
  const core = client.api(orchLibrary().CoreV1Api);
  const where = `ServiceAccount ${namespace}/${serviceAccount}`;
  try {
    await core.readNamespacedServiceAccount({ name: serviceAccount, namespace });
  } catch (err) {
    if (statusCodeOf(err) === 404) throw new UserError(`${where} not found (create it with --create-service-account)`);
    throw new UserError(`cannot read ${where}: ${apiErrorMessage(err)}`);
  }
  const legacy = await legacyToken(core, namespace, serviceAccount);
  if (legacy) return legacy;
  try {
    const answer = await core.createNamespacedServiceAccountToken({
      name: serviceAccount,
      namespace,
      body: { apiVersion: 'authentication.k8s.io/v1', kind: 'TokenRequest', spec: { audiences: [], expirationSeconds: REMOTE_TOKEN_SECONDS } },
    });
    const token = answer.status?.token;
    if (!token) throw new UserError(`the TokenRequest for ${where} returned no token`);
    return token;
  } catch (err) {
    if (err instanceof UserError) throw err;
    throw new UserError(`cannot get a token for ${where}: ${apiErrorMessage(err)}`);
  }
}

async function legacyToken(core: k8s.CoreV1Api, namespace: string, serviceAccount: string): Promise<string | undefined> {
  let secrets: k8s.V1SecretList;
  try {
    secrets = await core.listNamespacedSecret({ namespace });
  } catch {
    return undefined; // Not allowed to list secrets: the TokenRequest may still be.
  }
  const own = secrets.items
    .filter((s) => s.type === 'kubernetes.io/service-account-token' && s.metadata?.annotations?.['kubernetes.io/service-account.name'] === serviceAccount && s.data?.token)
    .sort((a, b) => (a.metadata!.name! < b.metadata!.name! ? -1 : 1));
  return own.length ? Buffer.from(own[0].data!.token, 'base64').toString('utf8') : undefined;
}
