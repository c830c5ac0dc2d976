import { validateAnnotations } from './annotations';
import { parseYamlDocument } from './config';
import { CONTAINER, TEMPLATE_DATA } from './go-types';
import { goJSON } from './go-json';
import {
  Container,
  CORE_DUMP_CONTAINER,
  DeployMeta,
  findContainer,
  findContainerInPod,
  INIT_CONTAINER,
  JsonMap,
  moveContainer,
  Pod,
  PROXY_CONTAINER,
  TypeMeta,
  VALIDATION_CONTAINER,
} from './pod';
import { dumpAppProbers, mergeOrAppendProbers, rewriteProbes, shouldRewriteProbes } from './probes';
import { InjectionConfigError, InjectionMeshConfig } from './proxy-config';
import { omitEmpty } from './omit-empty';
import { canonicalizeList, canonicalizeResources } from './quantity';
import { dropNulls, MergeError, strategicMerge } from './strategic-merge';
import { formatValue, GoStruct, Template, TemplateError, toPlain } from './template';

/**
 * Injection of one pod (the incumbent's injectPod): render the selected templates over the
 * pod's data, merge them into the pod, re-apply containers the user customized, rewrite probes,
 * and record what was injected in `sidecar.mesh.io/status`.
 */

export const STATUS_ANNOTATION = 'sidecar.mesh.io/status';
export const OVERRIDES_ANNOTATION = 'proxy.mesh.io/overrides';
export const TEMPLATES_ANNOTATION = 'inject.mesh.io/templates';
export const NATIVE_SIDECAR_ANNOTATION = 'sidecar.mesh.io/nativeSidecar';
const PROMETHEUS_MERGE_ANNOTATION = 'prometheus.mesh.io/merge-metrics';
const PROXY_IMAGE_TYPE_ANNOTATION = 'sidecar.mesh.io/proxyImageType';
const NETWORK_LABEL = 'topology.mesh.io/network';
const INIT_BEFORE_PROXY_ANNOTATION = 'sidecar.mesh.io/init-containers-before-proxy';
const PROMETHEUS_ENV = 'MESH_PROMETHEUS_ANNOTATIONS';

export class InjectionError extends InjectionConfigError {}

export interface InjectionParams {
  pod: Pod;
  deployMeta: DeployMeta;
  typeMeta: TypeMeta;
  templates: ReadonlyMap<string, Template>;
  defaultTemplates: readonly string[];
  aliases: ReadonlyMap<string, readonly string[]>;
  mesh: InjectionMeshConfig;
  values: Readonly<Record<string, unknown>>;
  revision: string;
  nativeSidecars: boolean;
  /** Environment of the proxy set by the webhook's URL (`/inject/cluster/c1/net/n1`). */
  proxyEnvs: Record<string, string>;
  injectedAnnotations: Readonly<Record<string, string>>;
  /** Containers to put before the proxy among native sidecars (setting + annotation). */
  initContainersBeforeProxy?: string;
}

const isMap = (v: unknown): v is JsonMap => typeof v === 'object' && v !== null && !Array.isArray(v);

function path(obj: unknown, ...keys: string[]): unknown {
  let cur = obj;
  for (const k of keys) cur = isMap(cur) ? cur[k] : undefined;
  return cur;
}

/** The injected pod. Throws InjectionError (a bad annotation, template or merge). */
export function injectPod(params: InjectionParams): Pod {
  const original = params.pod;
  validateAnnotations(original.metadata?.annotations);
  const { merged, templatePod } = runTemplates(params);
  const reapplied = reapplyOverwrittenContainers(merged, original, templatePod, params.mesh);
  postProcess(reapplied, templatePod, params);
  return omitEmpty(canonical(reapplied));
}

function clusterAndNetwork(params: InjectionParams): { cluster: string; network: string } {
  let cluster = String(path(params.values, 'global', 'multiCluster', 'clusterName') ?? '');
  let network = String(path(params.values, 'global', 'network') ?? '');
  if (params.proxyEnvs.MESH_META_CLUSTER_ID) cluster = params.proxyEnvs.MESH_META_CLUSTER_ID;
  if (params.proxyEnvs.MESH_META_NETWORK) network = params.proxyEnvs.MESH_META_NETWORK;
  const label = params.pod.metadata?.labels?.[NETWORK_LABEL];
  if (label !== undefined) network = label;
  return { cluster, network };
}

/** The pod without what an earlier injection added (containers named in the status). */
function stripPod(params: InjectionParams): Pod {
  const status = parseStatus(params.pod.metadata?.annotations?.[STATUS_ANNOTATION]);
  if (!status) return params.pod;
  const pod = structuredClone(params.pod);
  const spec = pod.spec ?? {};
  spec.containers = (spec.containers ?? []).filter((c) => !status.containers.includes(c.name));
  spec.initContainers = (spec.initContainers ?? []).filter((c) => !status.initContainers.includes(c.name));
  const target = String(params.mesh.statusPort);
  const annotations = pod.metadata!.annotations!;
  const current = prometheusAnnotation(annotations, 'prometheus_io_port');
  if (current !== undefined && annotations[current] === target) clearPrometheusAnnotations(annotations);
  delete annotations[STATUS_ANNOTATION];
  return pod;
}

interface Status {
  containers: string[];
  initContainers: string[];
}

function parseStatus(text: string | undefined): Status | undefined {
  if (text === undefined) return undefined;
  try {
    const s = JSON.parse(text);
    if (!isMap(s)) return undefined;
    const names = (v: unknown) => (Array.isArray(v) ? v.filter((x): x is string => typeof x === 'string') : []);
    return { containers: names(s.containers), initContainers: names(s.initContainers) };
  } catch {
    return undefined;
  }
}

function parseOverrides(pod: Pod): { containers: Container[]; initContainers: Container[] } {
  const text = pod.metadata?.annotations?.[OVERRIDES_ANNOTATION];
  if (text === undefined) return { containers: [], initContainers: [] };
  let doc: unknown;
  try {
    doc = JSON.parse(text);
  } catch (err) {
    throw new InjectionError(`annotation ${OVERRIDES_ANNOTATION}: not valid JSON: ${(err as Error).message}`);
  }
  const list = (v: unknown) => (Array.isArray(v) ? v.filter((c): c is Container => isMap(c) && typeof c.name === 'string') : []);
  return { containers: list(path(doc, 'containers')), initContainers: list(path(doc, 'initContainers')) };
}

/** Containers kept in the overrides annotation come back, so the templates see them again. */
function reinsertOverrides(pod: Pod): Pod {
  const overrides = parseOverrides(pod);
  if (overrides.containers.length === 0 && overrides.initContainers.length === 0) return pod;
  const copy = structuredClone(pod);
  copy.spec ??= {};
  for (const c of overrides.containers) if (!findContainer(c.name, copy.spec.containers)) (copy.spec.containers ??= []).push(c);
  for (const c of overrides.initContainers) if (!findContainer(c.name, copy.spec.initContainers)) (copy.spec.initContainers ??= []).push(c);
  return copy;
}

/** `<hub>/<image>:<tag>`, the tag's image type (`-distroless`, `-debug`) replaced by the variant asked for. */
function imageURL(values: Readonly<Record<string, unknown>>, image: string, imageType: string): string {
  const hub = String(path(values, 'global', 'hub') ?? '');
  const tagValue = path(values, 'global', 'tag');
  let tag = tagValue === undefined || tagValue === null ? '' : typeof tagValue === 'string' ? tagValue : formatValue(tagValue);
  if (imageType !== '') {
    for (const known of ['distroless', 'debug']) {
      if (tag.endsWith(`-${known}`)) {
        tag = tag.slice(0, -(known.length + 1));
        break;
      }
    }
    if (imageType !== 'default') tag = `${tag}-${imageType}`;
  }
  return `${hub}/${image}:${tag}`;
}

function templateData(params: InjectionParams, stripped: Pod): GoStruct {
  const values = params.values;
  const annotations = stripped.metadata?.annotations ?? {};
  let imageType = String(path(values, 'global', 'variant') ?? '');
  const pcImage = path(params.mesh.proxyConfig, 'image', 'imageType');
  if (typeof pcImage === 'string') imageType = pcImage;
  if (annotations[PROXY_IMAGE_TYPE_ANNOTATION] !== undefined) imageType = annotations[PROXY_IMAGE_TYPE_ANNOTATION];
  const proxyImage = String(path(values, 'global', 'proxy', 'image') || 'proxyv2');
  const initImage = String(path(values, 'global', 'proxy_init', 'image') || 'proxyv2');
  return new GoStruct(TEMPLATE_DATA, {
    typeMeta: { kind: params.typeMeta.kind, apiVersion: params.typeMeta.apiVersion },
    deploymentMeta: { Namespace: params.deployMeta.namespace, Name: params.deployMeta.name },
    objectMeta: stripped.metadata ?? {},
    spec: stripped.spec ?? {},
    proxyConfig: params.mesh.proxyConfig,
    meshConfig: params.mesh.data,
    values,
    revision: params.revision,
    nativeSidecars: params.nativeSidecars,
    proxyImage: imageURL(values, proxyImage, imageType),
    proxyInitImage: imageURL(values, initImage, imageType),
    proxyUID: 1337,
    proxyGID: 1337,
    inboundTrafficPolicyMode: params.mesh.inboundTrafficPolicyMode,
    compliancePolicy: '',
  });
}

function selectTemplates(params: InjectionParams): string[] {
  const annotated = params.pod.metadata?.annotations?.[TEMPLATES_ANNOTATION];
  const names = annotated !== undefined ? annotated.split(',').map((n) => n.trim()) : [...params.defaultTemplates];
  return names.flatMap((n) => [...(params.aliases.get(n) ?? [n])]);
}

/** Applies the rendered template text over a pod (strategic merge), as the orchestrator's typed round trip leaves it. */
function overlay(target: Pod, rendered: string, template: string): Pod {
  const patch = parseYamlDocument(rendered, `template ${template} (rendered)`) ?? {};
  if (!isMap(patch)) throw new InjectionError(`template ${template}: the rendered text is not a mapping of pod fields`);
  try {
    return dropNulls(strategicMerge(target, patch)) as Pod;
  } catch (err) {
    if (err instanceof MergeError) throw new InjectionError(`template ${template}: strategic merge: ${err.message}`);
    throw err;
  }
}

function runTemplates(params: InjectionParams): { merged: Pod; templatePod: Pod } {
  const { cluster, network } = clusterAndNetwork(params);
  if (cluster !== '') params.proxyEnvs.MESH_META_CLUSTER_ID = cluster;
  if (network !== '') params.proxyEnvs.MESH_META_NETWORK = network;
  const stripped = reinsertOverrides(stripPod(params));
  const data = templateData(params, stripped);
  let merged: Pod = params.pod;
  let templatePod: Pod = {};
  for (const name of selectTemplates(params)) {
    const tmpl = params.templates.get(name);
    if (!tmpl) throw new InjectionError(`requested template "${name}" not found; have ${[...params.templates.keys()].join(', ')}`);
    let rendered: string;
    try {
      rendered = tmpl.execute(data);
    } catch (err) {
      if (err instanceof TemplateError) throw new InjectionError(`failed to run injection template: ${err.message}`);
      throw err;
    }
    templatePod = overlay(templatePod, rendered, name);
    // With native sidecars the proxy is an init container; a user's customized proxy
    // container moves there so the two merge.
    let native = params.nativeSidecars;
    const annotation = merged.metadata?.annotations?.[NATIVE_SIDECAR_ANNOTATION];
    if (annotation === 'true') native = true;
    else if (annotation === 'false') native = false;
    if (native && findContainer(PROXY_CONTAINER, templatePod.spec?.initContainers) && findContainer(PROXY_CONTAINER, merged.spec?.containers)) {
      merged = structuredClone(merged);
      const proxy = findContainer(PROXY_CONTAINER, merged.spec!.containers)!;
      merged.spec!.containers = merged.spec!.containers!.filter((c) => c !== proxy);
      (merged.spec!.initContainers ??= []).push(proxy);
    }
    merged = overlay(merged, rendered, name);
  }
  return { merged, templatePod };
}

/** A container from the original pod merged back over the injected one (a user's proxy settings win). */
function applyContainer(target: Pod, container: Container, init: boolean): Pod {
  const patch = init ? { spec: { containers: [], initContainers: [container] } } : { spec: { containers: [container] } };
  return dropNulls(strategicMerge(target, patch)) as Pod;
}

function reapplyOverwrittenContainers(finalPod: Pod, originalPod: Pod, templatePod: Pod, mesh: InjectionMeshConfig): Pod {
  const existing = parseOverrides(originalPod);
  const statusText = originalPod.metadata?.annotations?.[STATUS_ANNOTATION];
  const alreadyInjected = statusText !== undefined;
  const status = parseStatus(statusText) ?? { containers: [], initContainers: [] };
  const overrides: { containers: Container[]; initContainers: Container[] } = { containers: [], initContainers: [] };
  for (const c of templatePod.spec?.containers ?? []) {
    if (status.containers.includes(c.name)) continue;
    const match = findContainer(c.name, existing.containers) ?? findContainer(c.name, originalPod.spec?.containers);
    if (!match) continue;
    const overlayC = structuredClone(match);
    if (overlayC.image === 'auto') delete overlayC.image;
    overrides.containers.push(overlayC);
    finalPod = applyContainer(finalPod, overlayC, false);
  }
  for (const c of templatePod.spec?.initContainers ?? []) {
    if (status.initContainers.includes(c.name)) continue;
    const match = findContainer(c.name, existing.initContainers) ?? findContainerInPod(c.name, originalPod);
    if (!match) continue;
    const overlayC = structuredClone(match);
    if (overlayC.image === 'auto') delete overlayC.image;
    overrides.initContainers.push(overlayC);
    finalPod = applyContainer(finalPod, overlayC, true);
  }
  if (!alreadyInjected && (overrides.containers.length > 0 || overrides.initContainers.length > 0)) {
    const json: JsonMap = {};
    if (overrides.containers.length > 0) json.containers = overrides.containers.map(goContainer);
    if (overrides.initContainers.length > 0) json.initContainers = overrides.initContainers.map(goContainer);
    finalPod.metadata ??= {};
    (finalPod.metadata.annotations ??= {})[OVERRIDES_ANNOTATION] = goJSON(json);
  }
  adjustInitContainerUser(finalPod, originalPod, mesh);
  return finalPod;
}

/** A container as the orchestrator's Go types serialize it (field order, omitted empties). */
function goContainer(c: Container): unknown {
  return toPlain(new GoStruct(CONTAINER, c));
}

/** A user's proxy runAsUser/runAsGroup carried to the iptables init (or validation) container. */
function adjustInitContainerUser(finalPod: Pod, originalPod: Pod, mesh: InjectionMeshConfig): void {
  const user = findContainerInPod(PROXY_CONTAINER, originalPod);
  const ctx = user?.securityContext;
  if (!ctx || (ctx.runAsUser === undefined && ctx.runAsGroup === undefined)) return;
  const init = findContainer(INIT_CONTAINER, finalPod.spec?.initContainers) ?? findContainer(VALIDATION_CONTAINER, finalPod.spec?.initContainers);
  if (!init) return;
  const tproxy = mesh.interceptionMode === 'TPROXY' || finalPod.metadata?.annotations?.['sidecar.mesh.io/interceptionMode'] === 'TPROXY';
  if (tproxy && ctx.runAsUser !== undefined) {
    const sidecar = findContainerInPod(PROXY_CONTAINER, finalPod);
    if (sidecar) (sidecar.securityContext ??= {}).runAsUser = 0;
  }
  if (!tproxy && init.name === VALIDATION_CONTAINER) {
    init.securityContext ??= {};
    if (ctx.runAsUser !== undefined) init.securityContext.runAsUser = ctx.runAsUser;
    if (ctx.runAsGroup !== undefined) init.securityContext.runAsGroup = ctx.runAsGroup;
  }
  if (typeof ctx.runAsUser !== 'number' || ctx.runAsUser === 0) return;
  const args = init.args ?? [];
  const at = args.indexOf('-u');
  if (at >= 0 && at + 1 < args.length) args[at + 1] = String(ctx.runAsUser);
}

/** Prometheus's label-name sanitizing: the annotation key with every non-[a-zA-Z0-9_] as `_`. */
function sanitize(key: string): string {
  return key.replace(/[^a-zA-Z0-9_]/g, '_');
}

function prometheusAnnotation(annotations: Record<string, string>, sanitized: string): string | undefined {
  return Object.keys(annotations).find((k) => sanitize(k) === sanitized);
}

function clearPrometheusAnnotations(annotations: Record<string, string>): void {
  for (const k of Object.keys(annotations)) if (['prometheus_io_path', 'prometheus_io_port', 'prometheus_io_scrape'].includes(sanitize(k))) delete annotations[k];
}

/** Metrics merging: the agent serves the merged metrics, so the scrape annotations point at it. */
function applyPrometheusMerge(pod: Pod, mesh: InjectionMeshConfig): void {
  const annotations = (pod.metadata!.annotations ??= {});
  const scrapeKey = prometheusAnnotation(annotations, 'prometheus_io_scrape');
  if (scrapeKey !== undefined && ['0', 'f', 'F', 'FALSE', 'false', 'False'].includes(annotations[scrapeKey])) return;
  const mergeAnnotation = annotations[PROMETHEUS_MERGE_ANNOTATION];
  let enabled = mesh.prometheusMerge;
  if (mergeAnnotation !== undefined) {
    if (['1', 't', 'T', 'TRUE', 'true', 'True'].includes(mergeAnnotation)) enabled = true;
    else if (['0', 'f', 'F', 'FALSE', 'false', 'False'].includes(mergeAnnotation)) enabled = false;
  }
  if (!enabled) return;
  const target = String(mesh.statusPort);
  const portKey = prometheusAnnotation(annotations, 'prometheus_io_port');
  if (portKey !== undefined && annotations[portKey] === target) return;
  const scrape: Record<string, string> = {};
  for (const [k, v] of Object.entries(annotations)) {
    const s = sanitize(k);
    if (s === 'prometheus_io_scrape') scrape.scrape = v;
    else if (s === 'prometheus_io_port') scrape.port = v;
    else if (s === 'prometheus_io_path') scrape.path = v;
  }
  const sidecar = findContainerInPod(PROXY_CONTAINER, pod);
  if (sidecar && Object.keys(scrape).length > 0) {
    const ordered: Record<string, string> = {};
    for (const k of ['scrape', 'path', 'port']) if (scrape[k] !== undefined) ordered[k] = scrape[k];
    (sidecar.env ??= []).push({ name: PROMETHEUS_ENV, value: goJSON(ordered) });
  }
  clearPrometheusAnnotations(annotations);
  annotations['prometheus.io/port'] = target;
  annotations['prometheus.io/path'] = '/stats/prometheus';
  annotations['prometheus.io/scrape'] = 'true';
}

function injectionStatus(templatePod: Pod, revision: string): string {
  const names = (list: { name: string }[] | undefined) => (list && list.length > 0 ? list.map((c) => c.name) : null);
  return goJSON({
    initContainers: names(templatePod.spec?.initContainers),
    containers: names(templatePod.spec?.containers),
    volumes: names(templatePod.spec?.volumes),
    imagePullSecrets: names(templatePod.spec?.imagePullSecrets),
    revision: revision === '' ? 'default' : revision,
  });
}

function postProcess(pod: Pod, templatePod: Pod, params: InjectionParams): void {
  pod.metadata ??= {};
  pod.metadata.annotations ??= {};
  pod.metadata.labels ??= {};
  pod.spec ??= {};
  // Cluster and network from the webhook's URL replace the proxy's environment entries.
  const sidecar = findContainerInPod(PROXY_CONTAINER, pod);
  if (sidecar && Object.keys(params.proxyEnvs).length > 0) {
    const env = (sidecar.env ?? []).filter((e) => !(e.name in params.proxyEnvs));
    for (const key of Object.keys(params.proxyEnvs).sort()) env.push({ name: key, value: params.proxyEnvs[key] });
    sidecar.env = env;
  }
  applyPrometheusMerge(pod, params.mesh);
  if (sidecar) {
    const fromValues = path(params.values, 'sidecarInjectorWebhook', 'rewriteAppHTTPProbe') === true;
    if (shouldRewriteProbes(pod.metadata.annotations, fromValues)) {
      const probers = dumpAppProbers(pod);
      if (probers !== '') {
        const previously = pod.metadata.annotations[STATUS_ANNOTATION] !== undefined;
        const proxy = findContainerInPod(PROXY_CONTAINER, pod)!;
        proxy.env = mergeOrAppendProbers(previously, proxy.env ?? [], probers);
      }
      rewriteProbes(pod, params.mesh.statusPort);
    }
  }
  if (params.proxyEnvs.MESH_META_NETWORK !== undefined) pod.metadata.labels[NETWORK_LABEL] = params.proxyEnvs.MESH_META_NETWORK;
  pod.metadata.annotations[STATUS_ANNOTATION] = injectionStatus(templatePod, params.revision);
  for (const [k, v] of Object.entries(params.injectedAnnotations)) pod.metadata.annotations[k] = v;
  reorder(pod, params);
}

function reorder(pod: Pod, params: InjectionParams): void {
  const hold = params.mesh.holdApplicationUntilProxyStarts || path(params.values, 'global', 'proxy', 'holdApplicationUntilProxyStarts') === true;
  const spec = pod.spec!;
  spec.containers = moveContainer(spec.containers, PROXY_CONTAINER, hold ? 'first' : 'last');
  const before = [params.initContainersBeforeProxy ?? '', pod.metadata?.annotations?.[INIT_BEFORE_PROXY_ANNOTATION] ?? '']
    .join(',')
    .split(',')
    .filter((n, i, all) => n !== '' && all.indexOf(n) === i);
  if (findContainer(PROXY_CONTAINER, spec.initContainers)) {
    // Native sidecars: {init or validation} => containers asked to come first => proxy => the rest.
    spec.initContainers = moveContainer(spec.initContainers, CORE_DUMP_CONTAINER, 'first');
    spec.initContainers = moveContainer(spec.initContainers, PROXY_CONTAINER, 'first');
    for (const name of [...before].reverse()) spec.initContainers = moveContainer(spec.initContainers, name, 'first');
    spec.initContainers = moveContainer(spec.initContainers, VALIDATION_CONTAINER, 'first');
    spec.initContainers = moveContainer(spec.initContainers, INIT_CONTAINER, 'first');
  } else {
    // iptables last, so other init containers still have the network.
    spec.initContainers = moveContainer(spec.initContainers, VALIDATION_CONTAINER, 'first');
    spec.initContainers = moveContainer(spec.initContainers, INIT_CONTAINER, 'last');
    spec.initContainers = moveContainer(spec.initContainers, CORE_DUMP_CONTAINER, 'last');
  }
}

/** Quantities in canonical form, as the orchestrator's serializer writes them. */
export function canonical<T extends Pod>(pod: T): T {
  const spec = pod.spec;
  if (!spec) return pod;
  for (const list of [spec.containers, spec.initContainers, spec.ephemeralContainers as Container[] | undefined]) {
    for (const c of list ?? []) canonicalizeResources(c.resources);
  }
  canonicalizeResources(spec.resources);
  if (isMap(spec.overhead)) canonicalizeList(spec.overhead);
  for (const v of spec.volumes ?? []) {
    const emptyDir = path(v, 'emptyDir');
    if (isMap(emptyDir) && emptyDir.sizeLimit !== undefined) {
      const limit = { sizeLimit: emptyDir.sizeLimit };
      canonicalizeList(limit);
      emptyDir.sizeLimit = limit.sizeLimit;
    }
  }
  return pod;
}
