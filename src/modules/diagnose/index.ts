/**
 * meshctl's diagnosing of a running mesh from the orchestrator API: `x describe pod`,
 * `x check-inject`, `x precheck`, `x metrics` and `remote-clusters`.
 */
export { diagnoseModule } from './module';
export { PodDescriber, DescribeOptions } from './describe/pod-describer';
export { PodDescription } from './describe/describe-pod';
export { InjectionChecker, parseLabelPairs } from './check-inject/injection-checker';
export { WebhookAnalysis } from './check-inject/webhook-analysis';
export { webhookTable } from './check-inject/render';
export { Precheck, PrecheckOptions } from './precheck/precheck';
export { atLeast, formatMessages, Level, Message, MessageFormat } from './messages/message';
export { findMetricsStore, METRICS_STORE_PORT, METRICS_STORE_SELECTOR } from './metrics/metrics-store';
export { metricsHeader, metricsRow, workloadMetrics, WorkloadMetrics } from './metrics/workload-metrics';
export { REQUEST_DURATION, REQUESTS_TOTAL } from './metrics/queries';
export { StoreRequest } from './metrics/query-client';
export { clustersTable, DAEMON_DEBUG_PORT, daemonPods, DaemonClusters, fetchClusters } from './remote-clusters/remote-clusters';
export { PodRequest } from './pod-requests';
