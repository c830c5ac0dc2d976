import { inject, injectable } from 'inversify';
import { Environment, Settings, SettingsToken } from '../settings';
import { PROXY_CONFIG_ANNOTATION } from './annotations';
import { InjectionConfig, parseInjectionConfig, parseValues } from './config';
import { templateFuncs } from './funcs';
import { injectPod, InjectionParams } from './inject-pod';
import { createJsonPatch, PatchOp } from './json-patch';
import { DeployMeta, deployMetaFromPod, Pod, TypeMeta } from './pod';
import { Decision, namespaceDecision, NamespaceInfo, podDecision } from './policy';
import { InjectionMeshConfig } from './proxy-config';
import { FuncMap } from './template';

/** What the injector works with: its config map's config and values, and the mesh config. */
export interface InjectionInputs {
  config: InjectionConfig;
  values: Readonly<Record<string, unknown>>;
  mesh: InjectionMeshConfig;
  /** The control plane revision this injector serves ('' for the default). */
  revision: string;
  /** ENABLE_NATIVE_SIDECARS (the pod's `sidecar.mesh.io/nativeSidecar` annotation wins). */
  nativeSidecars: boolean;
}

export type InjectionOutcome = { kind: 'injected'; pod: Pod } | { kind: 'skipped'; reason: string };

export interface WorkloadTarget {
  pod: Pod;
  typeMeta: TypeMeta;
  deployMeta: DeployMeta;
  /** The namespace the pod lands in ('' when the definition names none). */
  namespace: string;
}

/**
 * The sidecar injector: the webhook hands it an admitted pod with its namespace; `meshctl
 * orch-inject` hands it the pod templates of workload definitions. Both end in the same
 * injection (inject-pod.ts).
 */
@injectable()
export class SidecarInjector {
  private readonly funcMap: FuncMap;

  constructor(
    @inject(SettingsToken) private readonly settings: Settings,
    @inject(Environment) env: Environment,
  ) {
    this.funcMap = templateFuncs((name) => env[name]);
  }

  /** The template functions (builtins, sprig, the injector's). */
  get funcs(): FuncMap {
    return this.funcMap;
  }

  /** ENABLE_NATIVE_SIDECARS. */
  get nativeSidecarsSetting(): boolean {
    return this.settings.bool('ENABLE_NATIVE_SIDECARS');
  }

  /**
   * The inputs from their texts (config map keys or files); `where` names each source in
   * errors. Extra templates (an operator file's) join the config's.
   */
  loadInputs(
    sources: { config: string; values: string; mesh?: string; where: { config: string; values: string; mesh: string } },
    options: { revision?: string; nativeSidecars?: boolean; extraTemplates?: Record<string, string>; extraValues?: Record<string, unknown> } = {},
  ): InjectionInputs {
    const config = parseInjectionConfig(sources.config, sources.where.config, this.funcMap, options.extraTemplates);
    let values = parseValues(sources.values, sources.where.values);
    if (options.extraValues) values = deepMerge(values, options.extraValues);
    const mesh = sources.mesh === undefined ? InjectionMeshConfig.defaults() : InjectionMeshConfig.parse(sources.mesh, sources.where.mesh);
    return { config, values, mesh, revision: options.revision ?? '', nativeSidecars: options.nativeSidecars ?? this.nativeSidecarsSetting };
  }

  /**
   * The webhook's entry: the pod as admitted, its namespace, the current inputs, and the proxy
   * environment the webhook's path sets (`/inject/cluster/c1/net/n1`). Returns the injected
   * pod, or why it is not injected. Throws (InjectionConfigError) when injection fails.
   */
  injectAdmittedPod(pod: Pod, namespace: NamespaceInfo, inputs: InjectionInputs, proxyEnvs: Readonly<Record<string, string>> = {}): InjectionOutcome {
    const copy = structuredClone(pod);
    copy.metadata ??= {};
    // Managed fields can be large and do not change the result.
    delete copy.metadata.managedFields;
    if (!copy.metadata.namespace) copy.metadata.namespace = namespace.name;
    const enableByDefault = (inputs.values.sidecarInjectorWebhook as Record<string, unknown> | undefined)?.enableNamespacesByDefault === true;
    const nsDecision = namespaceDecision(namespace, copy, inputs.revision, enableByDefault);
    if (!nsDecision.inject) return { kind: 'skipped', reason: nsDecision.reason };
    const decision = podDecision(inputs.config, copy, copy.metadata.namespace);
    if (!decision.inject) return { kind: 'skipped', reason: decision.reason };
    const { deploy, type } = deployMetaFromPod(copy);
    const mesh = this.meshFor(copy, inputs.mesh);
    const injected = injectPod({ ...this.params(copy, deploy, type, inputs, mesh, inputs.config), proxyEnvs: { ...proxyEnvs } });
    return { kind: 'injected', pod: injected };
  }

  /**
   * `meshctl orch-inject`'s entry: a pod template from a workload definition. The policy is
   * taken as enabled (the definition's own annotation or label still says no) and the
   * `sidecar` template (or the pod's `inject.mesh.io/templates`) is rendered.
   */
  injectWorkload(target: WorkloadTarget, inputs: InjectionInputs): InjectionOutcome {
    const decision: Decision = podDecision({ policy: 'enabled', neverInjectSelector: [], alwaysInjectSelector: [] }, target.pod, target.namespace);
    if (!decision.inject) return { kind: 'skipped', reason: decision.reason };
    const mesh = this.meshFor(target.pod, inputs.mesh);
    const injected = injectPod(
      this.params(target.pod, target.deployMeta, target.typeMeta, inputs, mesh, { defaultTemplates: ['sidecar'], aliases: new Map(), injectedAnnotations: {} }),
    );
    return { kind: 'injected', pod: injected };
  }

  private meshFor(pod: Pod, mesh: InjectionMeshConfig): InjectionMeshConfig {
    const annotation = pod.metadata?.annotations?.[PROXY_CONFIG_ANNOTATION];
    return annotation === undefined ? mesh : mesh.withProxyConfigOverride(annotation, `annotation ${PROXY_CONFIG_ANNOTATION}`);
  }

  private params(
    pod: Pod,
    deployMeta: DeployMeta,
    typeMeta: TypeMeta,
    inputs: InjectionInputs,
    mesh: InjectionMeshConfig,
    config: Pick<InjectionConfig, 'defaultTemplates' | 'aliases' | 'injectedAnnotations'>,
  ): InjectionParams {
    return {
      pod,
      deployMeta,
      typeMeta,
      templates: inputs.config.templates,
      defaultTemplates: config.defaultTemplates,
      aliases: config.aliases,
      mesh,
      values: inputs.values,
      revision: inputs.revision,
      nativeSidecars: inputs.nativeSidecars,
      proxyEnvs: {},
      injectedAnnotations: config.injectedAnnotations,
    };
  }
}

/** The RFC 6902 patch from the admitted pod to the injected one (the webhook's answer). */
export function injectionPatch(original: Pod, injected: Pod): PatchOp[] {
  return createJsonPatch(original, injected);
}

const isMap = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** Values merged the way chart values are: mappings recursively, everything else replaced. */
export function deepMerge(base: Record<string, unknown>, over: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = { ...base };
  for (const [k, v] of Object.entries(over)) out[k] = isMap(v) && isMap(out[k]) ? deepMerge(out[k] as Record<string, unknown>, v) : v;
  return out;
}
