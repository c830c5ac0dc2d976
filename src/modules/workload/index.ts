/** meshctl's helpers for workloads outside the orchestrator: `x workload group create` and `x workload entry configure`. */
export { keyValues, namedPorts, workloadGroup, WorkloadGroupFlags, workloadGroupYaml } from './group';
export { configureEntry, EntryConfigureOptions, groupTemplate, MESH_TOKEN_AUDIENCE } from './entry-configure';
export { clusterEnv, GroupTemplate, vmEnvironment, vmFiles, VmFileInputs } from './vm-files';
