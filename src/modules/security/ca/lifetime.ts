/** Lifetimes of workload certificates (DEFAULT_WORKLOAD_CERT_TTL, MAX_WORKLOAD_CERT_TTL). */
export interface WorkloadCertTtl {
  /** Applied when a request asks for a non-positive lifetime. */
  readonly defaultMs: number;
  /** No certificate lives longer. */
  readonly maxMs: number;
}

/** The lifetime to issue for a request of `requestedSeconds` (the request's validity_duration). */
export function workloadLifetimeMs(requestedSeconds: number, ttl: WorkloadCertTtl): number {
  const requestedMs = Number.isFinite(requestedSeconds) && requestedSeconds > 0 ? requestedSeconds * 1000 : ttl.defaultMs;
  return Math.min(requestedMs, ttl.maxMs);
}
