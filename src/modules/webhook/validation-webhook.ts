/**
 * The validating admission webhook (`/validate`): mesh resources created or updated through the
 * orchestrator API are checked with the same rules and messages as `meshctl validate` and the
 * daemon's file source; an invalid one is refused with every problem named. Kinds the mesh does
 * not know (other groups, or mesh kinds this build does not model) are allowed: judging them is
 * not this webhook's business.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { inject, injectable } from 'inversify';
import { DEFAULT_CONFIG_FILE_LIMITS, KindRegistry, KindRegistryToken, validateDocument } from '../config';
import { Logging, LoggingToken, ScopedLogger } from '../logging';
import { AdmissionRequest, AdmissionResponse, AdmissionReview, isObject, nestedDeeperThan } from './admission';
import { serveAdmission } from './admission-endpoint';
import { HttpsHandler } from './contributions';
import { ValidationFailure, WebhookMetrics } from './metrics';

/**
 * An object carrying this annotation is always refused: the validating webhook controller
 * dry-runs such an object to learn that this webhook is really called before it makes the
 * webhook fail-closed.
 */
export const ALWAYS_REJECT_ANNOTATION = 'internal.mesh.io/webhook-always-reject';

@injectable()
export class ValidationWebhook implements HttpsHandler {
  private readonly log: ScopedLogger;

  constructor(
    @inject(KindRegistryToken) private readonly kinds: KindRegistry,
    @inject(WebhookMetrics) private readonly metrics: WebhookMetrics,
    @inject(LoggingToken) logging: Logging,
  ) {
    this.log = logging.scope('validationServer');
  }

  paths(): readonly string[] {
    return ['/validate', '/validate/'];
  }

  handle(req: IncomingMessage, res: ServerResponse, path: string): Promise<void> {
    return serveAdmission(req, res, path, this, this.log, { httpError: (status) => this.metrics.validationHttpError.inc({ status: String(status) }) });
  }

  admit(review: AdmissionReview): AdmissionResponse {
    const request = review.request;
    if (request.operation !== 'CREATE' && request.operation !== 'UPDATE') {
      this.failed(request, 'unsupported_operation');
      return { allowed: true };
    }
    if (!isObject(request.object)) {
      this.failed(request, 'yaml_decode_error');
      return { allowed: false, message: 'cannot decode configuration: the request carries no object' };
    }
    const object = withNamespace(request.object, request.namespace);
    if (!this.isMeshKind(object)) {
      this.log.debug(`allowing ${String(object.kind)} of ${String(object.apiVersion)}: not a mesh kind`);
      return { allowed: true };
    }
    // Deeper than any resource needs: refused before validation walks it (as files are).
    const maxDepth = DEFAULT_CONFIG_FILE_LIMITS.maxDepth;
    if (nestedDeeperThan(object, maxDepth)) {
      this.failed(request, 'invalid_resource');
      return { allowed: false, message: `configuration is invalid: ${describe(identity(object))}: nested more than ${maxDepth} levels deep` };
    }
    const result = validateDocument(object, this.kinds);
    const alwaysReject = annotations(object)[ALWAYS_REJECT_ANNOTATION] !== undefined;
    if (!result.ok || alwaysReject) {
      const what = describe(result.ok ? { kind: result.resource.kind, namespace: result.resource.metadata.namespace, name: result.resource.metadata.name } : result);
      const problems = result.ok ? [`${what}: metadata.annotations: "${ALWAYS_REJECT_ANNOTATION}" annotation found, rejecting`] : result.issues.map((i) => `${what}: ${i.field ? `${i.field}: ` : ''}${i.message}`);
      // The controller's own probe is expected to fail; logging it would only alarm.
      if (!alwaysReject) this.log.info(`refused ${request.operation} of ${what}: ${problems.join('; ')}`);
      this.failed(request, 'invalid_resource');
      return { allowed: false, message: `configuration is invalid: ${problems.join('; ')}` };
    }
    this.metrics.validationPassed.inc(resourceLabels(request));
    // Accepted, but the API server shows the user what probably does not do what they meant.
    const warnings = result.warnings.map((w) => `${w.field ? `${w.field}: ` : ''}${w.message}`);
    return { allowed: true, ...(warnings.length ? { warnings } : {}) };
  }

  /** A kind this build models, in its own group (any served version: a wrong one is refused by validation). */
  private isMeshKind(object: Record<string, unknown>): boolean {
    if (typeof object.kind !== 'string' || typeof object.apiVersion !== 'string') return false;
    const def = this.kinds.kindNamed(object.kind);
    return def !== undefined && object.apiVersion.split('/')[0] === def.group;
  }

  private failed(request: AdmissionRequest, reason: ValidationFailure): void {
    this.metrics.validationFailed.inc({ ...resourceLabels(request), reason });
  }
}

/** The orchestrator may leave the namespace to the request; validation reads it from the object. */
function withNamespace(object: Record<string, unknown>, namespace: string | undefined): Record<string, unknown> {
  if (!namespace || !isObject(object.metadata) || object.metadata.namespace) return object;
  return { ...object, metadata: { ...object.metadata, namespace } };
}

function annotations(object: Record<string, unknown>): Record<string, unknown> {
  const meta = object.metadata;
  return isObject(meta) && isObject(meta.annotations) ? meta.annotations : {};
}

function identity(object: Record<string, unknown>): { kind?: string; namespace?: string; name?: string } {
  const meta = isObject(object.metadata) ? object.metadata : {};
  return {
    kind: typeof object.kind === 'string' ? object.kind : undefined,
    namespace: typeof meta.namespace === 'string' ? meta.namespace : undefined,
    name: typeof meta.name === 'string' ? meta.name : undefined,
  };
}

/** `Kind namespace/name`, as `meshctl validate` names a resource. */
function describe(r: { kind?: string; namespace?: string; name?: string }): string {
  return `${r.kind ?? 'resource'}${r.name ? ` ${r.namespace ?? 'default'}/${r.name}` : ''}`;
}

function resourceLabels(request: AdmissionRequest): { group: string; version: string; resource: string } {
  return { group: request.resource.group, version: request.resource.version, resource: request.resource.resource };
}
