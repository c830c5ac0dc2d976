/** One kind of object the orchestrator API serves, as the paths of its REST API name it. */
export interface OrchResource {
  /** API group; empty for the core group (`/api/v1`). */
  group: string;
  version: string;
  /** Lower-case plural in paths, e.g. `endpointslices`. */
  plural: string;
  kind: string;
  namespaced: boolean;
}

/** The minimal shape of every object: what the informer and its cache read. */
export interface OrchObject {
  apiVersion?: string;
  kind?: string;
  metadata?: {
    name?: string;
    namespace?: string;
    uid?: string;
    resourceVersion?: string;
    labels?: Record<string, string>;
    annotations?: Record<string, string>;
  };
}

export const SERVICES: OrchResource = { group: '', version: 'v1', plural: 'services', kind: 'Service', namespaced: true };
export const PODS: OrchResource = { group: '', version: 'v1', plural: 'pods', kind: 'Pod', namespaced: true };
export const NODES: OrchResource = { group: '', version: 'v1', plural: 'nodes', kind: 'Node', namespaced: false };
export const NAMESPACES: OrchResource = { group: '', version: 'v1', plural: 'namespaces', kind: 'Namespace', namespaced: false };
export const CONFIG_MAPS: OrchResource = { group: '', version: 'v1', plural: 'configmaps', kind: 'ConfigMap', namespaced: true };
export const SECRETS: OrchResource = { group: '', version: 'v1', plural: 'secrets', kind: 'Secret', namespaced: true };
export const ENDPOINT_SLICES: OrchResource = { group: 'discovery.k8s.io', version: 'v1', plural: 'endpointslices', kind: 'EndpointSlice', namespaced: true };

/** `group/version`, or `version` alone for the core group. */
export function apiVersionOf(resource: Pick<OrchResource, 'group' | 'version'>): string {
  return resource.group ? `${resource.group}/${resource.version}` : resource.version;
}

/** The collection path: `/api/v1/pods`, `/apis/g/v/namespaces/ns/plural`... */
export function collectionPath(resource: OrchResource, namespace?: string): string {
  const root = resource.group ? `/apis/${resource.group}/${resource.version}` : `/api/${resource.version}`;
  const ns = resource.namespaced && namespace ? `/namespaces/${encodeURIComponent(namespace)}` : '';
  return `${root}${ns}/${resource.plural}`;
}

/** `Kind group/version`, for logs and errors. */
export function describeResource(resource: OrchResource): string {
  return `${resource.kind} (${apiVersionOf(resource)})`;
}

/** The cache key of an object: `namespace/name`, or `name` for cluster-scoped objects. */
export function objectKey(obj: OrchObject): string {
  const ns = obj.metadata?.namespace;
  const name = obj.metadata?.name ?? '';
  return ns ? `${ns}/${name}` : name;
}
