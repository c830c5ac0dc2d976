import { ApiError } from './errors';
import type { Obj } from './store';

/*
 * SelfSubjectAccessReview (authorization.k8s.io/v1): "may I do this?", answered from a small
 * authorizer. The server's token has full access, so every review is allowed unless a test
 * denies some attributes with `server.access.deny(...)`. The rules answer access reviews only;
 * requests themselves are not checked against them.
 */

/** What a deny rule matches; an absent field matches anything. */
export interface AccessRule {
  verb?: string;
  /** API group; '' is the core group. */
  group?: string;
  resource?: string;
  subresource?: string;
  /** '' matches cluster-scoped requests only. */
  namespace?: string;
  name?: string;
  /** The review's `status.reason` when the rule denies. */
  reason?: string;
}

/** The attributes a review asks about (its spec.resourceAttributes). */
interface ResourceAttributes {
  verb: string;
  group: string;
  resource: string;
  subresource: string;
  namespace: string;
  name: string;
}

export class AccessRules {
  private readonly denied: AccessRule[] = [];

  /** From now on, reviews matching `rule` are answered not allowed. */
  deny(rule: AccessRule): void {
    this.denied.push({ ...rule });
  }

  /** Everything is allowed again. */
  clear(): void {
    this.denied.length = 0;
  }

  /** The first deny rule matching, if any. */
  denying(attrs: ResourceAttributes): AccessRule | undefined {
    const matches = (want: string | undefined, have: string) => want === undefined || want === '*' || want === have;
    return this.denied.find(
      (r) =>
        matches(r.verb, attrs.verb) &&
        matches(r.group, attrs.group) &&
        matches(r.resource, attrs.resource) &&
        matches(r.subresource, attrs.subresource) &&
        matches(r.namespace, attrs.namespace) &&
        matches(r.name, attrs.name),
    );
  }
}

const str = (v: unknown): string => (typeof v === 'string' ? v : '');

/** The answer to a SelfSubjectAccessReview body (201 Created with its status filled in). */
export function reviewAccess(rules: AccessRules, body: unknown): Obj {
  const review = (body && typeof body === 'object' ? body : {}) as Obj;
  const spec: Obj = review.spec && typeof review.spec === 'object' ? review.spec : {};
  const resource = spec.resourceAttributes;
  const nonResource = spec.nonResourceAttributes;
  if ((resource === undefined || resource === null) === (nonResource === undefined || nonResource === null)) {
    throw new ApiError(422, 'Invalid', 'SelfSubjectAccessReview.authorization.k8s.io "" is invalid: spec.resourceAttributes: Invalid value: "null": exactly one of nonResourceAttributes or resourceAttributes must be specified', {
      kind: 'SelfSubjectAccessReview',
      group: 'authorization.k8s.io',
      causes: [{ reason: 'FieldValueInvalid', message: 'Invalid value: "null": exactly one of nonResourceAttributes or resourceAttributes must be specified', field: 'spec.resourceAttributes' }],
    });
  }
  let status: Obj = { allowed: true, reason: 'the test server allows its token everything' };
  if (resource) {
    const attrs: ResourceAttributes = {
      verb: str(resource.verb),
      group: str(resource.group),
      resource: str(resource.resource),
      subresource: str(resource.subresource),
      namespace: str(resource.namespace),
      name: str(resource.name),
    };
    const rule = rules.denying(attrs);
    if (rule) status = { allowed: false, ...(rule.reason ? { reason: rule.reason } : {}) };
  }
  return {
    kind: 'SelfSubjectAccessReview',
    apiVersion: 'authorization.k8s.io/v1',
    metadata: { creationTimestamp: null },
    spec,
    status,
  };
}
