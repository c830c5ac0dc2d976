import { asList, asObject, fail, has, isObject } from '../shared/config';
import { anyOf, SubjectPredicate } from './explain';
import { compilePermission } from './permission';
import { compilePrincipal } from './principal';
import type { RbacSubject } from './subject';

export type RbacAction = 'ALLOW' | 'DENY' | 'LOG';

export interface RbacDecision {
  /** Whether the request may go on (LOG always allows). */
  readonly allowed: boolean;
  /** The first policy (by name) that matched, if any. */
  readonly policyId?: string;
}

/** One policy's outcome for a subject, with the reason when it did not match. */
export interface RbacPolicyResult {
  readonly name: string;
  readonly matched: boolean;
  /** The first condition that failed: the permission side (`to`) is checked before the principal side (`from`). */
  readonly reason?: string;
}

/** A decision with every policy's outcome, in evaluation order. */
export interface RbacEvaluation extends RbacDecision {
  readonly action: RbacAction;
  readonly policies: readonly RbacPolicyResult[];
}

interface CompiledPolicy {
  readonly name: string;
  readonly permission: SubjectPredicate;
  readonly principal: SubjectPredicate;
}

const ACTIONS: readonly RbacAction[] = ['ALLOW', 'DENY', 'LOG'];

/**
 * envoy.config.rbac.v3.RBAC: a policy matches when any of its permissions and any of its
 * principals match; ALLOW allows only matched requests, DENY denies them, LOG allows all and
 * reports whether one matched. Policies are tried in name order, as Envoy's sorted map.
 */
export class RbacEngine {
  private constructor(readonly action: RbacAction, private readonly policies: readonly CompiledPolicy[]) {}

  static compile(value: unknown, field: string): RbacEngine {
    const rbac = asObject(value, field);
    const action = actionOf(rbac.action, `${field}.action`);
    const policies = isObject(rbac.policies) ? rbac.policies : {};
    const names = Object.keys(policies).sort();
    return new RbacEngine(action, names.map((name) => compilePolicy(name, policies[name], `${field}.policies[${JSON.stringify(name)}]`)));
  }

  /** The first matching policy's name. */
  match(subject: RbacSubject): string | undefined {
    return this.policies.find((p) => p.permission(subject) && p.principal(subject))?.name;
  }

  decide(subject: RbacSubject): RbacDecision {
    const policyId = this.match(subject);
    const matched = policyId !== undefined;
    const allowed = this.action === 'ALLOW' ? matched : this.action === 'DENY' ? !matched : true;
    return { allowed, policyId };
  }

  /** `decide` with each policy's outcome and the first failing condition of those that did not match. */
  explain(subject: RbacSubject): RbacEvaluation {
    const policies = this.policies.map((p): RbacPolicyResult => {
      if (!p.permission(subject)) return { name: p.name, matched: false, reason: `to: ${p.permission.why(subject)}` };
      if (!p.principal(subject)) return { name: p.name, matched: false, reason: `from: ${p.principal.why(subject)}` };
      return { name: p.name, matched: true };
    });
    return { action: this.action, policies, ...this.decide(subject) };
  }
}

function actionOf(value: unknown, field: string): RbacAction {
  if (value === undefined || value === null) return 'ALLOW';
  const action = typeof value === 'number' ? ACTIONS[value] : value;
  if (!ACTIONS.includes(action as RbacAction)) fail(field, `unknown action ${JSON.stringify(value)}`);
  return action as RbacAction;
}

function compilePolicy(name: string, value: unknown, field: string): CompiledPolicy {
  const policy = asObject(value, field);
  for (const key of ['condition', 'checked_condition']) {
    if (has(policy, key)) fail(`${field}.${key}`, 'CEL conditions are not supported by the built-in proxy');
  }
  const permissions = asList(policy.permissions, `${field}.permissions`).map((p, i) => compilePermission(p, `${field}.permissions[${i}]`));
  const principals = asList(policy.principals, `${field}.principals`).map((p, i) => compilePrincipal(p, `${field}.principals[${i}]`));
  if (permissions.length === 0) fail(`${field}.permissions`, 'needs at least one permission');
  if (principals.length === 0) fail(`${field}.principals`, 'needs at least one principal');
  return { name, permission: anyOf(permissions), principal: anyOf(principals) };
}
