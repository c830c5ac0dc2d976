/*
 * meshctl's install area: the operator resource (profiles, -f files, --set), the manifest it
 * renders, applying it to the cluster and waiting for readiness, and removing it.
 */
export { defaultManifestsDir, OPERATOR_API_VERSION, OPERATOR_KIND, OperatorSpec, PROFILES, resolveOperator, ResolvedOperator, setEntryTree, splitSetPath } from './operator';
export { ManifestObject, manifestYaml, MANAGED_BY_LABEL, objectRef, PART_OF_LABEL, PART_OF_VALUE, renderManifest, REVISION_LABEL, translateValues } from './render';
export { applyManifest, ApplyOutcome, FIELD_MANAGER, InstallReporter, verifyInstall, waitForReadiness } from './apply';
export { deleteObjects, findInstalled, uninstallSelector, UninstallScope } from './uninstall';
export { InstallOptions, InstallSetFlags, renderFromFlags, runInstall, runUninstall, UninstallOptions } from './run';
export { cniPaths, detectClusterPlatform, platformOfVersion } from './platform';
