/**
 * The webhooks' metrics, named exactly as in spec/01 ("Events") and labelled as the incumbent
 * labels them, registered on the daemon's registry.
 *
 * Labels:
 *   validator_validation_passed   group, version, resource (of the admission request)
 *   validator_validation_failed   group, version, resource, reason (ValidationFailure)
 *   validator_validation_http_error  status (the HTTP status answered)
 *   validator_validation_config_update_error, _config_load_error  reason
 *   webhook_patch_attempts_total, _retries_total  name (webhook configuration)
 *   webhook_patch_failures_total  name, reason (PatchFailure)
 */
import { inject, injectable } from 'inversify';
import { Counter, Histogram } from '../shared/prom-client';
import { DaemonMetrics } from '../monitoring';

export type ValidationFailure = 'unsupported_operation' | 'yaml_decode_error' | 'invalid_resource';
export type PatchFailure = 'wrong_revision' | 'load_ca_bundle_failure' | 'webhook_config_not_found' | 'webhook_entry_not_found' | 'webhook_update_failure';

// The incumbent's buckets for sidecar_injection_time_seconds.
const INJECTION_SECONDS = [0.001, 0.002, 0.005, 0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1, 2, 5];

@injectable()
export class WebhookMetrics {
  readonly injectionRequests: Counter;
  readonly injectionSuccess: Counter;
  readonly injectionSkip: Counter;
  readonly injectionFailure: Counter;
  readonly injectionTime: Histogram;

  readonly validationPassed: Counter<'group' | 'version' | 'resource'>;
  readonly validationFailed: Counter<'group' | 'version' | 'resource' | 'reason'>;
  readonly validationHttpError: Counter<'status'>;
  readonly validationConfigUpdates: Counter;
  readonly validationConfigUpdateError: Counter<'reason'>;
  readonly validationConfigLoadError: Counter<'reason'>;

  readonly patchAttempts: Counter<'name'>;
  readonly patchRetries: Counter<'name'>;
  readonly patchFailures: Counter<'name' | 'reason'>;

  constructor(@inject(DaemonMetrics) daemon: DaemonMetrics) {
    const registers = [daemon.registry];
    const counter = <L extends string = string>(name: string, help: string, labelNames: L[] = []) => new Counter<L>({ name, help, labelNames, registers });

    this.injectionRequests = counter('sidecar_injection_requests_total', 'Total number of sidecar injection requests.');
    this.injectionSuccess = counter('sidecar_injection_success_total', 'Total number of successful sidecar injection requests.');
    this.injectionSkip = counter('sidecar_injection_skip_total', 'Total number of skipped sidecar injection requests.');
    this.injectionFailure = counter('sidecar_injection_failure_total', 'Total number of failed sidecar injection requests.');
    this.injectionTime = new Histogram({ name: 'sidecar_injection_time_seconds', help: 'Total time taken for injection in seconds.', buckets: INJECTION_SECONDS, registers });

    this.validationPassed = counter('validator_validation_passed', 'Resource is valid.', ['group', 'version', 'resource']);
    this.validationFailed = counter('validator_validation_failed', 'Resource validation failed.', ['group', 'version', 'resource', 'reason']);
    this.validationHttpError = counter('validator_validation_http_error', 'Resource validation http serve errors.', ['status']);
    this.validationConfigUpdates = counter('validator_validation_config_updates', 'Webhook configuration updates.');
    this.validationConfigUpdateError = counter('validator_validation_config_update_error', 'Webhook configuration update errors.', ['reason']);
    this.validationConfigLoadError = counter('validator_validation_config_load_error', 'Webhook configuration (re)load errors.', ['reason']);

    this.patchAttempts = counter('webhook_patch_attempts_total', 'Webhook patching attempts.', ['name']);
    this.patchRetries = counter('webhook_patch_retries_total', 'Webhook patching retries.', ['name']);
    this.patchFailures = counter('webhook_patch_failures_total', 'Webhook patching total failures.', ['name', 'reason']);
  }
}
