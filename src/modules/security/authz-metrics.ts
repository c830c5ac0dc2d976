import { inject, injectable } from 'inversify';
import { Counter } from '../shared/prom-client';
import { DaemonMetrics } from '../monitoring';
import type { ExtAuthzObserver } from './authz';

/** The authorization metrics of spec/01, on the daemon's registry. */
@injectable()
export class AuthzMetrics implements ExtAuthzObserver {
  /** provider_lookup_cluster_failures: an external authorizer's service is not in the registry. */
  readonly providerLookupClusterFailures: Counter<'provider'>;

  constructor(@inject(DaemonMetrics) metrics: DaemonMetrics) {
    this.providerLookupClusterFailures = new Counter({
      name: 'provider_lookup_cluster_failures',
      help: 'Number of times a cluster lookup failed',
      labelNames: ['provider'],
      registers: [metrics.registry],
    });
  }

  lookupFailed(provider: string): void {
    this.providerLookupClusterFailures.inc({ provider });
  }
}
