/*
 * The resource types the server serves: the built-in ones (a fixed table) and those that
 * CustomResourceDefinitions register. Discovery, routing and storage all read this registry.
 */

export interface ResourceType {
  readonly group: string;
  /** Served versions, the preferred (storage) one first. */
  readonly versions: readonly string[];
  readonly kind: string;
  readonly listKind: string;
  readonly plural: string;
  readonly singular: string;
  readonly namespaced: boolean;
  readonly shortNames: readonly string[];
  readonly categories: readonly string[];
  /** Subresources besides the object itself: status, scale, token. */
  readonly subresources: readonly string[];
  /** metadata.generation is kept (bumped when anything but metadata and status changes). */
  readonly generation: boolean;
  /** The CustomResourceDefinition behind a custom type (as stored). */
  readonly crd?: CrdObject;
  /** Verbs discovery lists when not all of them (a review type is create-only). */
  readonly verbs?: readonly string[];
}

/** The fields of a CustomResourceDefinition this server reads. */
export interface CrdObject {
  metadata: { name: string; uid?: string };
  spec: {
    group: string;
    scope: 'Namespaced' | 'Cluster';
    names: { plural: string; singular?: string; kind: string; listKind?: string; shortNames?: string[]; categories?: string[] };
    versions: CrdVersion[];
    preserveUnknownFields?: boolean;
  };
}

export interface CrdVersion {
  name: string;
  served: boolean;
  storage: boolean;
  schema?: { openAPIV3Schema?: JsonSchema };
  subresources?: { status?: object; scale?: object };
  additionalPrinterColumns?: { name: string; type: string; jsonPath: string; format?: string; description?: string; priority?: number }[];
}

export interface JsonSchema {
  type?: string;
  format?: string;
  properties?: Record<string, JsonSchema>;
  additionalProperties?: JsonSchema | boolean;
  items?: JsonSchema;
  required?: string[];
  enum?: unknown[];
  default?: unknown;
  nullable?: boolean;
  minimum?: number;
  maximum?: number;
  minLength?: number;
  maxLength?: number;
  minItems?: number;
  maxItems?: number;
  pattern?: string;
  'x-kubernetes-preserve-unknown-fields'?: boolean;
  'x-kubernetes-int-or-string'?: boolean;
  'x-kubernetes-embedded-resource'?: boolean;
  [other: string]: unknown;
}

/** `group/plural`: the identity of a resource type, the same at every version. */
export function resourceKey(group: string, plural: string): string {
  return `${group}/${plural}`;
}

export function groupVersion(group: string, version: string): string {
  return group ? `${group}/${version}` : version;
}

interface BuiltIn {
  group: string;
  version: string;
  kind: string;
  plural: string;
  namespaced?: boolean;
  shortNames?: string[];
  subresources?: string[];
  generation?: boolean;
  categories?: string[];
  verbs?: string[];
}

const BUILT_INS: BuiltIn[] = [
  { group: '', version: 'v1', kind: 'Namespace', plural: 'namespaces', namespaced: false, shortNames: ['ns'], subresources: ['status', 'finalize'] },
  { group: '', version: 'v1', kind: 'Pod', plural: 'pods', shortNames: ['po'], subresources: ['status', 'log'], categories: ['all'] },
  { group: '', version: 'v1', kind: 'Service', plural: 'services', shortNames: ['svc'], subresources: ['status'], categories: ['all'] },
  { group: '', version: 'v1', kind: 'Endpoints', plural: 'endpoints', shortNames: ['ep'] },
  { group: '', version: 'v1', kind: 'ConfigMap', plural: 'configmaps', shortNames: ['cm'] },
  { group: '', version: 'v1', kind: 'Secret', plural: 'secrets' },
  { group: '', version: 'v1', kind: 'ServiceAccount', plural: 'serviceaccounts', shortNames: ['sa'], subresources: ['token'] },
  { group: '', version: 'v1', kind: 'Node', plural: 'nodes', namespaced: false, shortNames: ['no'], subresources: ['status'] },
  { group: '', version: 'v1', kind: 'Event', plural: 'events', shortNames: ['ev'] },
  { group: '', version: 'v1', kind: 'PersistentVolumeClaim', plural: 'persistentvolumeclaims', shortNames: ['pvc'], subresources: ['status'] },
  { group: 'apps', version: 'v1', kind: 'Deployment', plural: 'deployments', shortNames: ['deploy'], subresources: ['status', 'scale'], generation: true, categories: ['all'] },
  { group: 'apps', version: 'v1', kind: 'ReplicaSet', plural: 'replicasets', shortNames: ['rs'], subresources: ['status', 'scale'], generation: true, categories: ['all'] },
  { group: 'apps', version: 'v1', kind: 'StatefulSet', plural: 'statefulsets', shortNames: ['sts'], subresources: ['status', 'scale'], generation: true, categories: ['all'] },
  { group: 'apps', version: 'v1', kind: 'DaemonSet', plural: 'daemonsets', shortNames: ['ds'], subresources: ['status'], generation: true, categories: ['all'] },
  { group: 'batch', version: 'v1', kind: 'Job', plural: 'jobs', subresources: ['status'], generation: true, categories: ['all'] },
  { group: 'batch', version: 'v1', kind: 'CronJob', plural: 'cronjobs', shortNames: ['cj'], subresources: ['status'], generation: true, categories: ['all'] },
  { group: 'autoscaling', version: 'v2', kind: 'HorizontalPodAutoscaler', plural: 'horizontalpodautoscalers', shortNames: ['hpa'], subresources: ['status'], generation: true },
  { group: 'policy', version: 'v1', kind: 'PodDisruptionBudget', plural: 'poddisruptionbudgets', shortNames: ['pdb'], subresources: ['status'], generation: true },
  { group: 'networking.k8s.io', version: 'v1', kind: 'Ingress', plural: 'ingresses', shortNames: ['ing'], subresources: ['status'], generation: true },
  { group: 'networking.k8s.io', version: 'v1', kind: 'NetworkPolicy', plural: 'networkpolicies', shortNames: ['netpol'], generation: true },
  { group: 'discovery.k8s.io', version: 'v1', kind: 'EndpointSlice', plural: 'endpointslices' },
  { group: 'coordination.k8s.io', version: 'v1', kind: 'Lease', plural: 'leases' },
  { group: 'rbac.authorization.k8s.io', version: 'v1', kind: 'Role', plural: 'roles' },
  { group: 'rbac.authorization.k8s.io', version: 'v1', kind: 'RoleBinding', plural: 'rolebindings' },
  { group: 'rbac.authorization.k8s.io', version: 'v1', kind: 'ClusterRole', plural: 'clusterroles', namespaced: false },
  { group: 'rbac.authorization.k8s.io', version: 'v1', kind: 'ClusterRoleBinding', plural: 'clusterrolebindings', namespaced: false },
  { group: 'admissionregistration.k8s.io', version: 'v1', kind: 'MutatingWebhookConfiguration', plural: 'mutatingwebhookconfigurations', namespaced: false, generation: true, categories: ['api-extensions'] },
  { group: 'admissionregistration.k8s.io', version: 'v1', kind: 'ValidatingWebhookConfiguration', plural: 'validatingwebhookconfigurations', namespaced: false, generation: true, categories: ['api-extensions'] },
  // Not stored: a review is answered and forgotten (access-review.ts).
  { group: 'authorization.k8s.io', version: 'v1', kind: 'SelfSubjectAccessReview', plural: 'selfsubjectaccessreviews', namespaced: false, verbs: ['create'] },
  { group: 'apiextensions.k8s.io', version: 'v1', kind: 'CustomResourceDefinition', plural: 'customresourcedefinitions', namespaced: false, shortNames: ['crd', 'crds'], subresources: ['status'], generation: true, categories: ['api-extensions'] },
];

function builtInType(b: BuiltIn): ResourceType {
  return {
    group: b.group,
    versions: [b.version],
    kind: b.kind,
    listKind: `${b.kind}List`,
    plural: b.plural,
    singular: b.kind.toLowerCase(),
    namespaced: b.namespaced ?? true,
    shortNames: b.shortNames ?? [],
    categories: b.categories ?? [],
    subresources: b.subresources ?? [],
    generation: b.generation ?? false,
    ...(b.verbs ? { verbs: b.verbs } : {}),
  };
}

/** The type a CRD defines, or undefined when it serves no version. */
export function crdType(crd: CrdObject): ResourceType | undefined {
  const served = crd.spec.versions.filter((v) => v.served);
  if (served.length === 0) return undefined;
  const storage = crd.spec.versions.find((v) => v.storage) ?? served[0];
  const versions = [...served].sort((a, b) => (a === storage ? -1 : b === storage ? 1 : compareVersions(a.name, b.name)));
  const names = crd.spec.names;
  return {
    group: crd.spec.group,
    versions: versions.map((v) => v.name),
    kind: names.kind,
    listKind: names.listKind ?? `${names.kind}List`,
    plural: names.plural,
    singular: names.singular || names.kind.toLowerCase(),
    namespaced: crd.spec.scope !== 'Cluster',
    shortNames: names.shortNames ?? [],
    categories: names.categories ?? [],
    subresources: storage.subresources?.status ? ['status'] : [],
    generation: true,
    crd,
  };
}

/** Kubernetes version priority: GA > beta > alpha, higher numbers first (v2 > v1 > v1beta2 > v1beta1 > v1alpha1). */
export function compareVersions(a: string, b: string): number {
  const rank = (v: string): [number, number, number] => {
    const m = /^v(\d+)(?:(alpha|beta)(\d+))?$/.exec(v);
    if (!m) return [0, 0, 0];
    const stage = m[2] === undefined ? 3 : m[2] === 'beta' ? 2 : 1;
    return [stage, Number(m[1]), Number(m[3] ?? 0)];
  };
  const [sa, ma, na] = rank(a);
  const [sb, mb, nb] = rank(b);
  return sb - sa || mb - ma || nb - na || a.localeCompare(b);
}

/** The registry: built-ins plus CRD-defined types, by key and by group/version. */
export class ResourceRegistry {
  private readonly types = new Map<string, ResourceType>();
  /** Bumped on every change so discovery caches can tell. */
  generation = 0;

  constructor() {
    for (const b of BUILT_INS) this.add(builtInType(b));
  }

  add(type: ResourceType): void {
    this.types.set(resourceKey(type.group, type.plural), type);
    this.generation++;
  }

  remove(group: string, plural: string): void {
    if (this.types.delete(resourceKey(group, plural))) this.generation++;
  }

  byKey(key: string): ResourceType | undefined {
    return this.types.get(key);
  }

  /** The type serving `plural` at group/version, if that version is served. */
  lookup(group: string, version: string, plural: string): ResourceType | undefined {
    const type = this.types.get(resourceKey(group, plural));
    return type && type.versions.includes(version) ? type : undefined;
  }

  /** The type of `kind` at apiVersion `group/version`. */
  byKind(apiVersion: string, kind: string): ResourceType | undefined {
    const [group, version] = splitApiVersion(apiVersion);
    for (const type of this.types.values()) {
      if (type.group === group && type.kind === kind && type.versions.includes(version)) return type;
    }
    return undefined;
  }

  all(): ResourceType[] {
    return [...this.types.values()];
  }

  /** Groups and their served versions (preferred first); the core group is ''. */
  groups(): Map<string, string[]> {
    const out = new Map<string, string[]>();
    for (const type of this.types.values()) {
      const versions = out.get(type.group) ?? [];
      for (const v of type.versions) if (!versions.includes(v)) versions.push(v);
      out.set(type.group, versions);
    }
    for (const versions of out.values()) versions.sort(compareVersions);
    return out;
  }

  inGroupVersion(group: string, version: string): ResourceType[] {
    return this.all().filter((t) => t.group === group && t.versions.includes(version));
  }
}

export function splitApiVersion(apiVersion: string): [group: string, version: string] {
  const slash = apiVersion.indexOf('/');
  return slash < 0 ? ['', apiVersion] : [apiVersion.slice(0, slash), apiVersion.slice(slash + 1)];
}
