export { WorkloadAutoRegistration } from './auto-registration';
export { AutoRegistrationMetrics } from './metrics';
export { CustomObjectsWorkloadEntryApi, WorkloadEntryApi, WorkloadEntryApiToken } from './workload-entry-api';
export * from './entry-for-proxy';
