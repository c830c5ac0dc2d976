import { inject, injectable } from 'inversify';
import { Counter } from '../../shared/prom-client';
import { DaemonMetrics } from '../../monitoring';

/** spec/01's auto_registration_* counters, on the daemon's registry. */
@injectable()
export class AutoRegistrationMetrics {
  readonly success: Counter;
  readonly updates: Counter;
  readonly unregister: Counter;
  readonly deletes: Counter;
  readonly errors: Counter;

  constructor(@inject(DaemonMetrics) metrics: DaemonMetrics) {
    const counter = (name: string, help: string) => new Counter({ name, help, registers: [metrics.registry] });
    this.success = counter('auto_registration_success_total', 'Successful auto registrations.');
    this.updates = counter('auto_registration_updates_total', 'Auto registration updates.');
    this.unregister = counter('auto_registration_unregister_total', 'Unregistrations.');
    this.deletes = counter('auto_registration_deletes_total', 'Auto registrations cleaned up by timer.');
    this.errors = counter('auto_registration_errors_total', 'Auto registration errors.');
  }
}
