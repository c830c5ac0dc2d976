import { Document, parseAllDocuments } from 'yaml';
import { goYAML } from './go-json';
import { InjectionInputs, SidecarInjector } from './injector';
import { deployMetaFromPod, JsonMap, ObjectMeta, Pod, PodSpec } from './pod';
import { InjectionConfigError } from './proxy-config';

/**
 * Injection into workload definitions (`meshctl orch-inject`): every YAML document in order,
 * workloads with their pod template injected, `List`s item by item, other kinds unchanged.
 */

export class WorkloadError extends InjectionConfigError {}

/** Workload kinds by API group/version; each holds a pod template at spec.template. */
const TEMPLATED = new Map<string, string[]>([
  ['Deployment', ['apps/v1', 'apps/v1beta1', 'apps/v1beta2', 'extensions/v1beta1']],
  ['DaemonSet', ['apps/v1', 'apps/v1beta2', 'extensions/v1beta1']],
  ['StatefulSet', ['apps/v1', 'apps/v1beta1', 'apps/v1beta2']],
  ['ReplicaSet', ['apps/v1', 'apps/v1beta2', 'extensions/v1beta1']],
  ['Job', ['batch/v1']],
  ['ReplicationController', ['v1']],
  ['DeploymentConfig', ['apps.openshift.io/v1', 'v1']],
]);

const isMap = (v: unknown): v is JsonMap => typeof v === 'object' && v !== null && !Array.isArray(v);

function isKnown(doc: JsonMap): boolean {
  const kind = String(doc.kind ?? '');
  const version = String(doc.apiVersion ?? '');
  if (kind === 'Pod' || kind === 'List') return version === 'v1';
  if (kind === 'CronJob') return version === 'batch/v1' || version === 'batch/v1beta1';
  return TEMPLATED.get(kind)?.includes(version) ?? false;
}

/** Where a workload keeps the pod's metadata and spec (a CronJob's metadata is its job template's, as the incumbent reads it). */
function podParts(doc: JsonMap, what: string): { holder: JsonMap; metaKey: string; specHolder: JsonMap } {
  const spec = doc.spec;
  if (doc.kind === 'Pod') return { holder: doc, metaKey: 'metadata', specHolder: doc };
  if (!isMap(spec)) throw new WorkloadError(`${what}: spec is required`);
  if (doc.kind === 'CronJob') {
    const jobTemplate = spec.jobTemplate;
    if (!isMap(jobTemplate) || !isMap(jobTemplate.spec) || !isMap(jobTemplate.spec.template)) throw new WorkloadError(`${what}: spec.jobTemplate.spec.template is required`);
    return { holder: jobTemplate, metaKey: 'metadata', specHolder: jobTemplate.spec.template };
  }
  if (!isMap(spec.template)) throw new WorkloadError(`${what}: spec.template is required`);
  return { holder: spec.template, metaKey: 'metadata', specHolder: spec.template };
}

export type Warn = (message: string) => void;

/** Injects one parsed object (mutating a copy); returns the object to print. */
export function injectObject(injector: SidecarInjector, inputs: InjectionInputs, input: JsonMap, what: string, warn: Warn): JsonMap {
  const doc = structuredClone(input);
  if (doc.kind === 'List' && doc.apiVersion === 'v1') {
    const items = doc.items;
    if (items === undefined || items === null) return doc;
    if (!Array.isArray(items)) throw new WorkloadError(`${what}: items must be a list`);
    doc.items = items.map((item, i) => (isMap(item) && isKnown(item) ? injectObject(injector, inputs, item, `${what} item ${i + 1}`, warn) : item));
    return doc;
  }
  const kind = String(doc.kind);
  const meta = isMap(doc.metadata) ? (doc.metadata as ObjectMeta) : {};
  const { holder, metaKey, specHolder } = podParts(doc, what);
  const podMeta: ObjectMeta = isMap(holder[metaKey]) ? (holder[metaKey] as ObjectMeta) : {};
  const podSpec: PodSpec = isMap(specHolder.spec) ? (specHolder.spec as PodSpec) : {};
  let deploy = { name: String(meta.name ?? ''), namespace: String(meta.namespace ?? '') };
  let type = { kind, apiVersion: String(doc.apiVersion) };
  const pod: Pod = { metadata: structuredClone(podMeta), spec: structuredClone(podSpec) };
  if (kind === 'Pod') ({ deploy, type } = deployMetaFromPod(pod));
  const name = podMeta.name || deploy.name;
  const namespace = podMeta.namespace || deploy.namespace;
  const fullName = deploy.namespace ? `${deploy.namespace}/${name}` : name;
  const label = type.kind ? `${type.kind} "${fullName}"` : `"${fullName}"`;
  if (podSpec.hostNetwork === true) {
    warn(`===> Skipping injection because ${label} has host networking enabled`);
    return doc;
  }
  let outcome;
  try {
    outcome = injector.injectWorkload({ pod, typeMeta: type, deployMeta: deploy, namespace }, inputs);
  } catch (err) {
    if (err instanceof InjectionConfigError) throw new WorkloadError(`${what}: ${err.message}`);
    throw err;
  }
  if (outcome.kind === 'skipped') {
    warn(`===> Skipping injection because ${label} has sidecar injection disabled`);
    return doc;
  }
  holder[metaKey] = outcome.pod.metadata ?? {};
  specHolder.spec = outcome.pod.spec ?? {};
  return doc;
}

export interface DocumentLimits {
  maxDocuments: number;
}

/**
 * The command's whole transformation: YAML text in, YAML text out, each document followed by
 * `---`. A document that is not a mapping, or not valid YAML, is an error naming it.
 */
export function injectDocuments(injector: SidecarInjector, inputs: InjectionInputs, text: string, source: string, warn: Warn, limits: DocumentLimits = { maxDocuments: 10_000 }): string {
  let docs: Document.Parsed[];
  try {
    docs = parseAllDocuments(text, { uniqueKeys: false }) as Document.Parsed[];
  } catch (err) {
    throw new WorkloadError(`${source}: not valid YAML: ${(err as Error).message.split('\n')[0]}`);
  }
  if (!Array.isArray(docs)) docs = [docs];
  if (docs.length > limits.maxDocuments) throw new WorkloadError(`${source}: more than ${limits.maxDocuments} documents`);
  let out = '';
  docs.forEach((d, i) => {
    const what = `${source}: document ${i + 1}`;
    if (d.errors.length > 0) throw new WorkloadError(`${what}: not valid YAML: ${d.errors[0].message.split('\n')[0]}`);
    let value: unknown;
    try {
      value = d.toJS({ maxAliasCount: 100 });
    } catch (err) {
      throw new WorkloadError(`${what}: ${(err as Error).message.split('\n')[0]}`);
    }
    if (value === null || value === undefined) {
      out += '---\n';
      return;
    }
    if (!isMap(value)) throw new WorkloadError(`${what}: not a mapping (an object with apiVersion and kind)`);
    if (!isKnown(value as JsonMap)) {
      out += documentText(text, d) + '---\n';
      return;
    }
    const object = withStatusDefaults(value) as JsonMap;
    const kindName = `${String(object.kind)} ${String((object.metadata as JsonMap | undefined)?.name ?? '')}`.trim();
    const injected = injectObject(injector, inputs, object, `${what} (${kindName})`, warn);
    out += goYAML(injected) + '---\n';
  });
  return out;
}

/**
 * The status counters the orchestrator's Go types always write (they are not omitempty), so a
 * workload printed back reads as the orchestrator's serializer would print it.
 */
const STATUS_DEFAULTS: Record<string, JsonMap> = {
  StatefulSet: { replicas: 0, availableReplicas: 0 },
  ReplicaSet: { replicas: 0 },
  ReplicationController: { replicas: 0 },
  DaemonSet: { currentNumberScheduled: 0, numberMisscheduled: 0, desiredNumberScheduled: 0, numberReady: 0 },
};

function withStatusDefaults(doc: unknown): unknown {
  if (!isMap(doc)) return doc;
  if (doc.kind === 'List' && Array.isArray(doc.items)) return { ...doc, items: doc.items.map((item) => (isMap(item) && isKnown(item) ? withStatusDefaults(item) : item)) };
  const defaults = STATUS_DEFAULTS[String(doc.kind)];
  if (!defaults) return doc;
  return { ...doc, status: { ...defaults, ...(isMap(doc.status) ? doc.status : {}) } };
}

/** A document's own text, as it was written (without its `---` line). */
function documentText(source: string, d: Document.Parsed): string {
  const text = source.slice(d.range[0], d.range[2]).replace(/^---[ \t]*(\r?\n|$)/, '');
  return text.endsWith('\n') ? text : text + '\n';
}
