import { collectionPath, OrchClient, OrchResource, statusCodeOf } from '../orch';

/** The list answer of the orchestrator API, items typed by the caller. */
interface ListAnswer<T> {
  items?: T[];
}

/** Every object of `resource` (in `namespace`, else everywhere), optionally selected by labels or fields. */
export async function listObjects<T>(client: OrchClient, resource: OrchResource, namespace?: string, query: { labelSelector?: string; fieldSelector?: string } = {}): Promise<T[]> {
  const params: Record<string, string> = {};
  if (query.labelSelector) params.labelSelector = query.labelSelector;
  if (query.fieldSelector) params.fieldSelector = query.fieldSelector;
  const answer = (await client.getJson(collectionPath(resource, namespace), params)) as ListAnswer<T>;
  return Array.isArray(answer?.items) ? answer.items : [];
}

/** Like listObjects, but a resource the API does not serve (its definition not installed) is empty. */
export async function listIfServed<T>(client: OrchClient, resource: OrchResource, namespace?: string): Promise<T[]> {
  try {
    return await listObjects<T>(client, resource, namespace);
  } catch (err) {
    if (statusCodeOf(err) === 404) return [];
    throw err;
  }
}

/** One object, or undefined when it does not exist. */
export async function getObject<T>(client: OrchClient, resource: OrchResource, namespace: string | undefined, name: string): Promise<T | undefined> {
  try {
    return (await client.getJson(`${collectionPath(resource, namespace)}/${encodeURIComponent(name)}`)) as T;
  } catch (err) {
    if (statusCodeOf(err) === 404) return undefined;
    throw err;
  }
}
