/**
 * Sidecar injection: the injector's Go templates (template/), its configuration, the injection
 * decision, and the injection of pods (the webhook) and workload definitions (meshctl orch-inject).
 */
export { SidecarInjector, InjectionInputs, InjectionOutcome, WorkloadTarget, injectionPatch, deepMerge } from './injector';
export { injectDocuments, injectObject, WorkloadError } from './workloads';
export { InjectionConfig, InjectionPolicy, LabelSelector, parseInjectionConfig, parseValues, parseYamlDocument } from './config';
export { InjectionMeshConfig, InjectionConfigError } from './proxy-config';
export { namespaceDecision, podDecision, NamespaceInfo, Decision, IGNORED_NAMESPACES } from './policy';
export { createJsonPatch, applyJsonPatch, PatchOp } from './json-patch';
export { canonicalQuantity } from './quantity';
export { annotationValueProblem } from './annotations';
export { Pod } from './pod';
export { injectModule } from './module';
