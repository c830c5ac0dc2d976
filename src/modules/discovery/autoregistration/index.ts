export { WorkloadAutoRegistration } from './auto-registration';
export { AutoRegistrationMetrics } from './metrics';
export { CustomObjectsWorkloadEntryApi, WorkloadEntryApi, WorkloadEntryApiSource, WorkloadEntryApiSourceToken } from './workload-entry-api';
export { OrchWorkloadEntryApiSource } from './orch-api-source';
export * from './entry-for-proxy';
