import { badRequest, notFound } from './errors';
import type { Obj, Store } from './store';
import { timestamp } from './operations';
import type { TokenSigner } from './tls';

/*
 * The serviceaccounts/token subresource: a TokenRequest answered with a signed JWT for
 * `system:serviceaccount:<ns>:<name>`, its audiences (the API server's own by default),
 * expirationSeconds (at least 600, default 3600) and an optional bound pod or secret.
 */

export const DEFAULT_AUDIENCE = 'https://kubernetes.default.svc.cluster.local';

export async function requestToken(store: Store, signer: TokenSigner, sa: Obj, body: unknown): Promise<Obj> {
  const request = (body && typeof body === 'object' ? body : {}) as Obj;
  const spec: Obj = request.spec ?? {};
  const audiences: string[] = Array.isArray(spec.audiences) && spec.audiences.length > 0 ? spec.audiences.map(String) : [DEFAULT_AUDIENCE];
  const expirationSeconds = spec.expirationSeconds ?? 3600;
  if (!Number.isInteger(expirationSeconds) || expirationSeconds < 600) {
    throw badRequest(`TokenRequest.authentication.k8s.io "${sa.metadata.name}" is invalid: spec.expirationSeconds: Invalid value: ${expirationSeconds}: may not specify a duration less than 10 minutes`);
  }
  if (expirationSeconds > 2 ** 32) throw badRequest(`spec.expirationSeconds: Invalid value: ${expirationSeconds}: may not specify a duration larger than 2^32 seconds`);
  let boundObject: { kind: string; name: string; uid: string } | undefined;
  const ref = spec.boundObjectRef;
  if (ref) {
    const key = ref.kind === 'Pod' ? '/pods' : ref.kind === 'Secret' ? '/secrets' : undefined;
    if (!key) throw badRequest(`spec.boundObjectRef.kind: Unsupported value: "${ref.kind}": supported values: "Pod", "Secret"`);
    const bound = store.get(key, sa.metadata.namespace, ref.name);
    if (!bound || (ref.uid && ref.uid !== bound.metadata.uid)) throw notFound('', key.slice(1), ref.name);
    boundObject = { kind: ref.kind, name: ref.name, uid: bound.metadata.uid };
  }
  const { token, expiresAt } = await signer.sign({ namespace: sa.metadata.namespace, serviceAccount: sa.metadata.name, serviceAccountUid: sa.metadata.uid, audiences, expirationSeconds, boundObject });
  return {
    kind: 'TokenRequest',
    apiVersion: 'authentication.k8s.io/v1',
    metadata: { name: sa.metadata.name, namespace: sa.metadata.namespace, creationTimestamp: null },
    spec: { audiences, expirationSeconds, boundObjectRef: spec.boundObjectRef ?? null },
    status: { token, expirationTimestamp: timestamp(expiresAt) },
  };
}
