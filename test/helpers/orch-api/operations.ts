import { randomUUID } from 'node:crypto';
import { isDeepStrictEqual } from 'node:util';
import * as YAML from 'yaml';
import type { AdmissionAttributes, Operation, WebhookAdmission } from './admission';
import { serverSideApply } from './apply';
import { alreadyExists, ApiError, badRequest, conflict, invalid, notFound, type StatusCause } from './errors';
import { isObject, jsonPatch, mergePatch } from './json-patch';
import type { OwnerIndex } from './owners';
import { groupVersion, type ResourceType, resourceKey } from './resources';
import { applyDefaults, prune, validate as validateSchema } from './schema';
import { type ClusterIpAllocator, prepareForCreate, prepareForUpdate, specChanged, validateObject } from './strategies';
import { builtInListStrategy, type ListStrategy, strategicMergePatch } from './strategic-merge';
import type { Obj, Store } from './store';
import { crdListStrategy, crdSchema } from './crds';

/*
 * The write path every request takes, from HTTP or from a test's direct call: decoding checks,
 * defaulting, CRD pruning, mutating admission, per-kind preparation, validation, validating
 * admission, then one store commit under optimistic concurrency (a write that raced another
 * is a 409 Conflict, as etcd's compare-and-swap makes it on the real server).
 */

export interface WriteOptions {
  /** Run the admission webhooks (HTTP requests always do; direct test calls choose). */
  readonly admission: boolean;
  readonly dryRun?: boolean;
  readonly fieldManager?: string;
  /** Strict | Warn | Ignore, as the fieldValidation query parameter. */
  readonly fieldValidation?: string;
  /** Warnings for the Warning response header (admission webhooks, unknown fields). */
  readonly warnings?: string[];
}

export interface DeleteOptions {
  propagationPolicy?: 'Orphan' | 'Background' | 'Foreground';
  gracePeriodSeconds?: number;
  preconditions?: { uid?: string; resourceVersion?: string };
}

export type PatchType = 'merge' | 'json' | 'strategic' | 'apply';

const GENERATE_ALPHABET = 'bcdfghjklmnpqrstvwxz2456789';
const NAMESPACES = resourceKey('', 'namespaces');
const PODS = resourceKey('', 'pods');

export function timestamp(ms = Date.now()): string {
  return new Date(ms).toISOString().replace(/\.\d+Z$/, 'Z');
}

export class Operations {
  /** Called when a Namespace is marked for deletion: with the cluster simulated, the namespace controller finishes it. */
  namespaceFinalizer?: (name: string) => void;
  /**
   * With the cluster simulated, a pod on a node is deleted gracefully: marked (deletionTimestamp)
   * and finished by the kubelet. Answers whether it takes the pod.
   */
  podTerminator?: (pod: Obj, gracePeriodSeconds: number | undefined) => boolean;

  constructor(
    private readonly store: Store,
    private readonly admission: WebhookAdmission,
    private readonly ips: ClusterIpAllocator,
    private readonly owners: OwnerIndex,
  ) {}

  /** The stored object as served at `version` (custom objects are stored once, served at every version). */
  asVersion(type: ResourceType, obj: Obj, version: string): Obj {
    const apiVersion = groupVersion(type.group, version);
    return obj.apiVersion === apiVersion ? obj : { ...obj, apiVersion };
  }

  get(type: ResourceType, namespace: string | undefined, name: string): Obj {
    const found = this.store.get(resourceKey(type.group, type.plural), namespace ?? '', name);
    if (!found) throw notFound(type.group, type.plural, name);
    return found;
  }

  async create(type: ResourceType, version: string, namespace: string | undefined, body: unknown, opts: WriteOptions, managedFields?: Obj[]): Promise<Obj> {
    let obj = this.decode(type, version, namespace, body);
    const warnings = opts.warnings ?? [];
    delete obj.metadata.resourceVersion;
    obj.metadata.uid = undefined;
    if (!obj.metadata.name && !obj.metadata.generateName) {
      throw invalid(type.group, type.kind, '', [{ reason: 'FieldValueRequired', field: 'metadata.name', message: 'Required value: name or generateName is required' }]);
    }
    if (type.namespaced) this.checkNamespaceOpen(obj.metadata.namespace);
    this.pruneCustom(type, version, obj, opts, warnings);
    if (opts.admission) {
      obj = (await this.admission.mutate(this.attributes('CREATE', type, version, obj, undefined, opts), warnings)) as Obj;
      obj = this.redecode(type, version, obj);
      this.pruneCustom(type, version, obj, { ...opts, fieldValidation: 'Ignore' }, warnings);
    }
    if (!obj.metadata.name) obj.metadata.name = obj.metadata.generateName + randomSuffix();
    prepareForCreate(type, obj, this.ips);
    const meta = obj.metadata;
    meta.uid = randomUUID();
    meta.creationTimestamp = timestamp();
    delete meta.deletionTimestamp;
    delete meta.deletionGracePeriodSeconds;
    if (type.generation) meta.generation = 1;
    else delete meta.generation;
    if (managedFields) meta.managedFields = managedFields;
    else delete meta.managedFields;
    this.validate(type, version, obj);
    if (opts.admission) await this.admission.validate(this.attributes('CREATE', type, version, obj, undefined, opts), warnings);
    const key = resourceKey(type.group, type.plural);
    if (this.store.get(key, meta.namespace ?? '', meta.name)) throw alreadyExists(type.group, type.plural, meta.name);
    if (type.namespaced) this.checkNamespaceOpen(meta.namespace);
    if (opts.dryRun) return obj;
    return this.store.commit('ADDED', key, this.toStorage(type, obj));
  }

  /** PUT of the object or of its status subresource. */
  async update(type: ResourceType, version: string, namespace: string | undefined, name: string, body: unknown, opts: WriteOptions, subresource?: string): Promise<Obj> {
    const current = this.get(type, namespace, name);
    let obj = this.decode(type, version, namespace, body);
    if (obj.metadata.name !== name) throw badRequest(`the name of the object (${obj.metadata.name}) does not match the name on the URL (${name})`);
    const rv = obj.metadata.resourceVersion;
    if (rv !== undefined && rv !== '' && rv !== current.metadata.resourceVersion) throw conflict(type.group, type.plural, name);
    if ((rv === undefined || rv === '') && type.crd) {
      throw invalid(type.group, type.kind, name, [{ reason: 'FieldValueInvalid', field: 'metadata.resourceVersion', message: 'Invalid value: 0x0: must be specified for an update' }]);
    }
    return this.replace(type, version, current, obj, opts, subresource);
  }

  async patch(type: ResourceType, version: string, namespace: string | undefined, name: string, patchType: PatchType, text: string, opts: WriteOptions & { force?: boolean }, subresource?: string): Promise<Obj> {
    const key = resourceKey(type.group, type.plural);
    const current = this.store.get(key, namespace ?? '', name);
    if (patchType === 'apply') return this.apply(type, version, namespace, name, text, opts, current, subresource);
    if (!current) throw notFound(type.group, type.plural, name);
    const patch = parseJson(text);
    const versioned = this.asVersion(type, current, version);
    let patched: unknown;
    switch (patchType) {
      case 'merge':
        if (!isObject(patch)) throw badRequest('json: cannot unmarshal into Go value of type map[string]interface {}');
        patched = mergePatch(versioned, patch);
        break;
      case 'json':
        patched = jsonPatch(versioned, patch);
        break;
      case 'strategic':
        if (type.crd) throw new ApiError(415, 'UnsupportedMediaType', 'the body of the request was in an unknown format - accepted media types include: application/json-patch+json, application/merge-patch+json, application/apply-patch+yaml');
        patched = strategicMergePatch(versioned, patch);
        break;
    }
    if (!isObject(patched)) throw invalid(type.group, type.kind, name, [{ reason: 'FieldValueInvalid', field: '', message: 'the patched object is not an object' }]);
    const obj = this.decode(type, version, namespace, patched);
    if (obj.metadata.name !== name) throw badRequest(`the name of the object (${obj.metadata.name}) does not match the name on the URL (${name})`);
    if (obj.metadata.resourceVersion !== current.metadata.resourceVersion) throw conflict(type.group, type.plural, name);
    return this.replace(type, version, current, obj, opts, subresource);
  }

  async remove(type: ResourceType, version: string, namespace: string | undefined, name: string, options: DeleteOptions, opts: WriteOptions): Promise<Obj> {
    const current = this.get(type, namespace, name);
    const meta = current.metadata;
    const pre = options.preconditions ?? {};
    if (pre.uid && pre.uid !== meta.uid) {
      throw new ApiError(409, 'Conflict', `Precondition failed: UID in precondition: ${pre.uid}, UID in object meta: ${meta.uid}`, { name, group: type.group || undefined, kind: type.plural });
    }
    if (pre.resourceVersion && pre.resourceVersion !== meta.resourceVersion) {
      throw new ApiError(409, 'Conflict', `Precondition failed: ResourceVersion in precondition: ${pre.resourceVersion}, ResourceVersion in object meta: ${meta.resourceVersion}`, { name, group: type.group || undefined, kind: type.plural });
    }
    if (opts.admission) await this.admission.validate(this.attributes('DELETE', type, version, undefined, this.asVersion(type, current, version), opts, { kind: 'DeleteOptions', apiVersion: 'meta.k8s.io/v1', ...options }), opts.warnings ?? []);
    if (opts.dryRun) return this.asVersion(type, current, version);
    const key = resourceKey(type.group, type.plural);
    const latest = this.store.get(key, namespace ?? '', name);
    if (!latest) throw notFound(type.group, type.plural, name);
    const isNamespace = key === NAMESPACES;
    if (key === PODS && latest.metadata.deletionTimestamp && options.gracePeriodSeconds !== 0) return latest;
    if (key === PODS && !latest.metadata.deletionTimestamp && this.podTerminator?.(latest, options.gracePeriodSeconds)) {
      const grace = options.gracePeriodSeconds ?? latest.spec?.terminationGracePeriodSeconds ?? 30;
      const marked: Obj = { ...latest, metadata: { ...latest.metadata, deletionTimestamp: timestamp(Date.now() + grace * 1000), deletionGracePeriodSeconds: grace } };
      return this.store.commit('MODIFIED', key, marked, latest);
    }
    const finalizers: string[] = latest.metadata.finalizers ?? [];
    if (finalizers.length > 0 || (isNamespace && this.namespaceFinalizer)) {
      if (latest.metadata.deletionTimestamp) return latest;
      const marked: Obj = { ...latest, metadata: { ...latest.metadata, deletionTimestamp: timestamp(), deletionGracePeriodSeconds: 0 } };
      if (isNamespace) marked.status = { ...(latest.status ?? {}), phase: 'Terminating' };
      const committed = this.store.commit('MODIFIED', key, marked, latest);
      if (isNamespace) this.namespaceFinalizer?.(name);
      return committed;
    }
    if (isNamespace) this.deleteNamespaceContents(name);
    return this.finishDelete(key, latest, options.propagationPolicy ?? 'Background');
  }

  /** Removes the object now and cascades to its dependents (or orphans them). */
  finishDelete(key: string, obj: Obj, policy: 'Orphan' | 'Background' | 'Foreground'): Obj {
    const current = this.store.get(key, obj.metadata.namespace ?? '', obj.metadata.name);
    if (!current) return obj;
    const deleted = this.store.commit('DELETED', key, current, current);
    if (key === resourceKey('', 'services')) this.ips.release(current.spec?.clusterIP);
    const uid = current.metadata.uid;
    for (const ref of this.owners.of(uid)) {
      const dependent = this.store.get(ref.key, ref.namespace, ref.name);
      if (!dependent) continue;
      if (policy === 'Orphan') {
        const refs = (dependent.metadata.ownerReferences ?? []).filter((r: Obj) => r.uid !== uid);
        const next: Obj = { ...dependent, metadata: { ...dependent.metadata, ownerReferences: refs } };
        if (refs.length === 0) delete next.metadata.ownerReferences;
        this.store.commit('MODIFIED', ref.key, next, dependent);
      } else if ((dependent.metadata.finalizers ?? []).length > 0) {
        if (!dependent.metadata.deletionTimestamp) this.store.commit('MODIFIED', ref.key, { ...dependent, metadata: { ...dependent.metadata, deletionTimestamp: timestamp() } }, dependent);
      } else {
        this.finishDelete(ref.key, dependent, 'Background');
      }
    }
    return deleted;
  }

  /** Deletes every object in the namespace (the namespace controller's job, done at once). */
  deleteNamespaceContents(namespace: string): void {
    for (const key of this.store.typesIn(namespace)) {
      for (const obj of this.store.items(key, namespace)) this.finishDelete(key, obj, 'Background');
    }
  }

  /** Removes a namespace marked for deletion once it is empty. */
  finalizeNamespace(name: string): void {
    const ns = this.store.get(NAMESPACES, '', name);
    if (!ns || !ns.metadata.deletionTimestamp) return;
    this.deleteNamespaceContents(name);
    this.finishDelete(NAMESPACES, ns, 'Background');
  }

  // ---- internals ----

  private async apply(type: ResourceType, version: string, namespace: string | undefined, name: string, text: string, opts: WriteOptions & { force?: boolean }, current: Obj | undefined, subresource?: string): Promise<Obj> {
    if (!opts.fieldManager) throw badRequest('PATCH /apply requests require a fieldManager');
    let applied: unknown;
    try {
      applied = YAML.parse(text, { maxAliasCount: 100, strict: true });
    } catch (err) {
      throw badRequest(`error decoding YAML: ${(err as Error).message}`);
    }
    if (!isObject(applied)) throw badRequest('the applied configuration is not an object');
    const appliedObj = applied as Obj;
    if (!isObject(appliedObj.metadata)) throw badRequest('metadata is required in an applied configuration');
    if (appliedObj.metadata.name !== name) throw badRequest(`the name of the object (${appliedObj.metadata.name}) does not match the name on the URL (${name})`);
    const apiVersion = groupVersion(type.group, version);
    if (appliedObj.apiVersion !== apiVersion || appliedObj.kind !== type.kind) {
      throw badRequest(`the API version in the data (${appliedObj.apiVersion}) does not match the expected API version (${apiVersion})`);
    }
    const strategy = this.listStrategy(type, version);
    const q = { group: type.group, plural: type.plural, name };
    const live = current ? this.asVersion(type, current, version) : undefined;
    const result = serverSideApply(live, appliedObj, opts.fieldManager, opts.force === true, apiVersion, strategy, q);
    if (!current) return this.create(type, version, namespace, result.object, opts, result.managedFields);
    const merged = { ...result.object, metadata: { ...result.object.metadata, managedFields: result.managedFields, resourceVersion: current.metadata.resourceVersion } };
    return this.replace(type, version, current, this.decode(type, version, namespace, merged), opts, subresource, true);
  }

  private listStrategy(type: ResourceType, version: string): (path: readonly string[]) => ListStrategy {
    return type.crd ? crdListStrategy(crdSchema(type, version)) : builtInListStrategy;
  }

  private async replace(type: ResourceType, version: string, current: Obj, incoming: Obj, opts: WriteOptions, subresource?: string, keepManagedFields = false): Promise<Obj> {
    const warnings = opts.warnings ?? [];
    const key = resourceKey(type.group, type.plural);
    let obj = this.mergeSubresource(type, current, incoming, subresource);
    const oldVersioned = this.asVersion(type, current, version);
    this.pruneCustom(type, version, obj, opts, warnings);
    if (opts.admission) {
      obj = (await this.admission.mutate(this.attributes('UPDATE', type, version, obj, oldVersioned, opts, undefined, subresource), warnings)) as Obj;
      obj = this.redecode(type, version, obj);
      this.pruneCustom(type, version, obj, { ...opts, fieldValidation: 'Ignore' }, warnings);
    }
    const causes = prepareForUpdate(type, obj, current);
    if (causes.length > 0) throw invalid(type.group, type.kind, current.metadata.name, causes);
    const meta = obj.metadata;
    meta.uid = current.metadata.uid;
    meta.creationTimestamp = current.metadata.creationTimestamp;
    meta.namespace = current.metadata.namespace;
    if (current.metadata.deletionTimestamp) {
      meta.deletionTimestamp = current.metadata.deletionTimestamp;
      meta.deletionGracePeriodSeconds = current.metadata.deletionGracePeriodSeconds;
    } else {
      delete meta.deletionTimestamp;
      delete meta.deletionGracePeriodSeconds;
    }
    if (!keepManagedFields) {
      if (current.metadata.managedFields) meta.managedFields = current.metadata.managedFields;
      else delete meta.managedFields;
    }
    if (type.generation) {
      const generation = current.metadata.generation ?? 1;
      meta.generation = specChanged(obj, current) ? generation + 1 : generation;
    }
    this.validate(type, version, obj);
    if (opts.admission) await this.admission.validate(this.attributes('UPDATE', type, version, obj, oldVersioned, opts, undefined, subresource), warnings);
    const stored = this.toStorage(type, obj);
    const latest = this.store.get(key, current.metadata.namespace ?? '', current.metadata.name);
    if (latest !== current) throw conflict(type.group, type.plural, current.metadata.name);
    // An unchanged object is not written (no new resourceVersion, no watch event); as on the
    // real server, a new managedFields time alone (an apply that changed nothing) is no change.
    // Compared as the JSON it is stored as: a field set to undefined is no field.
    const timeless = (o: Obj) => JSON.parse(JSON.stringify({ ...o, metadata: { ...o.metadata, resourceVersion: current.metadata.resourceVersion, managedFields: (o.metadata.managedFields as Obj[] | undefined)?.map((e) => ({ ...e, time: undefined })) } }));
    if (isDeepStrictEqual(timeless(stored), timeless(current))) return current;
    if (opts.dryRun) return stored;
    if (stored.metadata.deletionTimestamp && (stored.metadata.finalizers ?? []).length === 0) {
      const committed = this.store.commit('MODIFIED', key, stored, current);
      return this.finishDelete(key, committed, 'Background');
    }
    return this.store.commit('MODIFIED', key, stored, current);
  }

  /** What a write of the object or of its status subresource may change. */
  private mergeSubresource(type: ResourceType, current: Obj, incoming: Obj, subresource?: string): Obj {
    const hasStatus = type.subresources.includes('status');
    if (subresource === 'status') {
      const next: Obj = { ...structuredClone(current), apiVersion: incoming.apiVersion, status: incoming.status };
      // Labels and annotations may change through the status of built-in kinds (not custom ones).
      if (!type.crd) next.metadata = { ...next.metadata, labels: incoming.metadata.labels, annotations: incoming.metadata.annotations };
      if (next.status === undefined) delete next.status;
      if (next.metadata.labels === undefined) delete next.metadata.labels;
      if (next.metadata.annotations === undefined) delete next.metadata.annotations;
      return next;
    }
    if (subresource) throw badRequest(`subresource ${subresource} cannot be written this way`);
    if (hasStatus) {
      const next = { ...incoming };
      if (current.status !== undefined) next.status = structuredClone(current.status);
      else delete next.status;
      return next;
    }
    return incoming;
  }

  /** Checks and fills in the type information of a request body; returns a private copy. */
  private decode(type: ResourceType, version: string, namespace: string | undefined, body: unknown): Obj {
    if (!isObject(body)) throw badRequest('the request body is not a JSON object');
    const obj = structuredClone(body) as Obj;
    const apiVersion = groupVersion(type.group, version);
    obj.apiVersion ??= apiVersion;
    obj.kind ??= type.kind;
    if (obj.apiVersion !== apiVersion) throw badRequest(`the API version in the data (${obj.apiVersion}) does not match the expected API version (${apiVersion})`);
    if (obj.kind !== type.kind) throw badRequest(`the kind in the data (${obj.kind}) does not match the expected kind (${type.kind})`);
    if (obj.metadata === undefined || obj.metadata === null) obj.metadata = {};
    if (!isObject(obj.metadata)) throw badRequest('metadata must be an object');
    if (type.namespaced) {
      if (obj.metadata.namespace && namespace && obj.metadata.namespace !== namespace) {
        throw badRequest('the namespace of the provided object does not match the namespace sent on the request');
      }
      obj.metadata.namespace = namespace ?? obj.metadata.namespace ?? 'default';
    } else {
      delete obj.metadata.namespace;
    }
    return obj;
  }

  private redecode(type: ResourceType, version: string, obj: Obj): Obj {
    return this.decode(type, version, type.namespaced ? obj.metadata?.namespace : undefined, obj);
  }

  private pruneCustom(type: ResourceType, version: string, obj: Obj, opts: WriteOptions, warnings: string[]): void {
    if (!type.crd) return;
    const schema = crdSchema(type, version);
    const removed = prune(obj, schema);
    if (removed.length > 0 && opts.fieldValidation === 'Strict') {
      throw badRequest(`${type.kind} in version "${version}" cannot be handled as a ${type.kind}: strict decoding error: ${removed.map((p) => `unknown field "${p}"`).join(', ')}`);
    }
    if (opts.fieldValidation !== 'Ignore') for (const p of removed) warnings.push(`unknown field "${p}"`);
    applyDefaults(obj, schema);
  }

  private validate(type: ResourceType, version: string, obj: Obj): void {
    const causes: StatusCause[] = validateObject(type, obj);
    if (type.crd) causes.push(...validateSchema(obj, crdSchema(type, version)));
    if (causes.length > 0) throw invalid(type.group, type.kind, obj.metadata.name ?? '', causes);
  }

  private checkNamespaceOpen(namespace: string | undefined): void {
    const ns = this.store.get(NAMESPACES, '', namespace ?? '');
    if (!ns) throw notFound('', 'namespaces', namespace ?? '');
    if (ns.metadata.deletionTimestamp) {
      throw new ApiError(403, 'Forbidden', `unable to create new content in namespace ${namespace} because it is being terminated`, {
        name: namespace,
        kind: 'namespaces',
        causes: [{ reason: 'NamespaceTerminating', message: `namespace ${namespace} is being terminated`, field: 'metadata.namespace' }],
      });
    }
  }

  private toStorage(type: ResourceType, obj: Obj): Obj {
    const apiVersion = groupVersion(type.group, type.versions[0]);
    return obj.apiVersion === apiVersion ? obj : { ...obj, apiVersion };
  }

  private attributes(operation: Operation, type: ResourceType, version: string, object: Obj | undefined, oldObject: Obj | undefined, opts: WriteOptions, options?: Obj, subresource?: string): AdmissionAttributes {
    const target = object ?? oldObject;
    const kindOfOptions = operation === 'CREATE' ? 'CreateOptions' : operation === 'UPDATE' ? 'UpdateOptions' : 'DeleteOptions';
    return {
      operation,
      type,
      version,
      subresource,
      namespace: type.namespaced ? target?.metadata?.namespace : undefined,
      name: target?.metadata?.name,
      object,
      oldObject,
      dryRun: opts.dryRun === true,
      options: options ?? { kind: kindOfOptions, apiVersion: 'meta.k8s.io/v1', ...(opts.fieldManager ? { fieldManager: opts.fieldManager } : {}) },
    };
  }
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch (err) {
    throw badRequest(`error decoding patch: ${(err as Error).message}`);
  }
}

function randomSuffix(): string {
  let out = '';
  for (let i = 0; i < 5; i++) out += GENERATE_ALPHABET[Math.floor(Math.random() * GENERATE_ALPHABET.length)];
  return out;
}

